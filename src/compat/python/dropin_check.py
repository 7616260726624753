"""The official Python SDK (typesafe-sdk), unchanged, against this server: run by
src/compat/python-sdk.test.ts, which starts the servers and checks the ledger. Each step prints
one JSON object on stdout; an assertion that fails exits non-zero with its message."""

import json
import sys

from typesafe_sdk import (
    Choice,
    Noul,
    RetryPolicy,
    Score,
    TypeSafeAPIError,
    TypeSafeAuthenticationError,
    TypeSafeBadRequestError,
    TypeSafeClient,
    TypeSafeRateLimitError,
)

NO_RETRY = RetryPolicy(max_retries=0)


def client(url: str, key: str, retry: RetryPolicy = NO_RETRY) -> TypeSafeClient:
    return TypeSafeClient(api_key=key, base_url=url, retry=retry)


def answers(url: str, key: str) -> dict:
    with client(url, key) as c:
        many = {f"option {i}": (None if i % 2 else f"description {i}") for i in range(255)}
        result = c.system_one(
            state="I was charged twice for order 1234 and want my money back today.",
            questions={
                "refund": Noul(instructions="The customer wants a refund."),
                "topic": Choice(instructions="What is it about?", criteria={"billing": "money", "shipping": None, "other": "anything else"}),
                "many": Choice(instructions="Which option?", criteria=many),
                "urgency": Score(instructions="How urgent?", criteria=["low", "", "high"]),
            },
        )
        assert 0 <= result.nouls["refund"].noul <= 1, result
        topic = result.choices["topic"]
        assert topic.choice in {"billing", "shipping", "other"}, topic
        assert abs(sum(topic.probabilities.values()) - 1) < 1e-6, topic
        assert len(result.choices["many"].probabilities) == 255, result.choices["many"]
        urgency = result.scores["urgency"]
        assert 0 <= urgency.score <= 2, urgency
        # The SDK keys the legend by level number; a null level would be refused, "" is read.
        assert sorted(str(k) for k in urgency.legend) == ["0", "1", "2"] and list(urgency.legend.values()) == ["low", "", "high"], urgency
        models = c.models.list()
        return {
            "model": result.model,
            "input_tokens": result.usage.input_tokens,
            "models": [getattr(m, "name", None) for m in (models.models if hasattr(models, "models") else models)],
        }


def errors(url: str, key: str, poor_key: str, limited_key: str) -> dict:
    seen = {}
    try:
        with client(url, "tjs_wrong_key_0000000000000000000000000000") as c:
            c.system_one(state="s", questions={"q": Noul(instructions="Is it?")})
    except TypeSafeAuthenticationError as e:
        seen["401"] = type(e).__name__
    try:
        with client(url, key) as c:
            c.system_one(state="s", questions={"q": Noul(instructions="Is it?")}, model="jev-ultra")
    except TypeSafeBadRequestError as e:
        seen["400"] = type(e).__name__
    try:
        with client(url, poor_key) as c:
            c.system_one(state="s", questions={"q": Noul(instructions="Is it?")})
    except TypeSafeAPIError as e:
        assert e.status == 402, e
        seen["402"] = type(e).__name__
    with client(url, limited_key) as c:
        c.system_one(state="s", questions={"q": Noul(instructions="Is it?")})
        try:
            c.system_one(state="s", questions={"q": Noul(instructions="Is it?")})
        except TypeSafeRateLimitError as e:
            assert e.retry_after_ms is not None and e.retry_after_ms > 0, e
            seen["429"] = type(e).__name__
    return seen


def retries(url: str, key: str, idempotency_key: str) -> dict:
    policy = RetryPolicy(max_retries=3, backoff_initial=0, backoff_max=0, respect_retry_after=True)
    with client(url, key, policy) as c:
        result = c.system_one(
            state="Retried until answered.",
            questions={"q": Noul(instructions="Is it answered?")},
            extra_headers={"Idempotency-Key": idempotency_key},
        )
        return {"noul": result.nouls["q"].noul, "input_tokens": result.usage.input_tokens}


if __name__ == "__main__":
    step, *args = sys.argv[1:]
    print(json.dumps({"answers": answers, "errors": errors, "retries": retries}[step](*args)))
