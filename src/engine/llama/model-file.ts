import { existsSync } from "node:fs";
import path from "node:path";
import { resolveModelFile } from "node-llama-cpp";

export interface ModelFileSettings {
  /** A local GGUF path, an `hf:` URI or an http(s) URL. */
  model: string;
  modelsDir: string;
  showDownloadProgress?: boolean;
  /** How long the download host may take to answer before the start fails (default 10 s). */
  probeTimeoutMs?: number;
}

const OFFLINE_HELP = "set JUDGE_MODEL to a local .gguf file, or run `npm run start:fixture` to serve the tiny self-made model";

/**
 * The model file on disk: a local path as given, a cached download, or a download. The
 * downloader retries for minutes without a word when the host cannot be reached, so the host is
 * asked first, briefly, and an offline first start fails within seconds saying what to do.
 */
export async function findModelFile(settings: ModelFileSettings, report: (detail: string) => void): Promise<string> {
  const uri = asModelUri(settings.model);
  if (!isRemote(uri)) {
    if (!existsSync(uri)) throw new Error(`the model file ${uri} does not exist; ${OFFLINE_HELP}`);
    return uri;
  }
  const cached = await resolveModelFile(uri, { directory: settings.modelsDir, download: false, cli: false }).catch(() => undefined);
  if (cached) return cached;
  const host = downloadHost(uri);
  report(`checking that ${host} can be reached to download ${settings.model}`);
  await probe(host, settings.model, settings.probeTimeoutMs ?? 10_000);
  report(`downloading ${settings.model} into ${settings.modelsDir}`);
  return resolveModelFile(uri, {
    directory: settings.modelsDir,
    cli: settings.showDownloadProgress ?? false,
    // /health reports download progress, for logs and orchestrators that see no terminal.
    onProgress: ({ totalSize, downloadedSize }) => report(`downloading the model: ${totalSize > 0 ? Math.floor((100 * downloadedSize) / totalSize) : 0}%`),
  });
}

async function probe(host: string, model: string, timeoutMs: number): Promise<void> {
  try {
    await fetch(host, { method: "HEAD", redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    const why = error instanceof Error && error.name === "TimeoutError" ? `no answer within ${timeoutMs / 1000} s` : cause;
    throw new Error(`cannot download ${model}: ${host} cannot be reached (${why}). No internet access? ${capitalise(OFFLINE_HELP)}`);
  }
}

/** Where a URI's file comes from: Hugging Face for `hf:`, the URL's own origin otherwise. */
export function downloadHost(uri: string): string {
  if (/^hf:/i.test(uri)) return "https://huggingface.co";
  return new URL(uri).origin;
}

const isRemote = (uri: string) => /^(hf:|https?:\/\/)/i.test(uri);

/**
 * A local path is taken relative to the working directory, as users expect; node-llama-cpp
 * would otherwise look for it inside the models directory.
 */
export function asModelUri(model: string): string {
  return /^[a-z][a-z0-9+.-]*:/i.test(model) && !/^[a-z]:[\\/]/i.test(model) ? model : path.resolve(model);
}

const capitalise = (text: string) => text[0].toUpperCase() + text.slice(1);
