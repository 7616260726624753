import { createServer, type IncomingHttpHeaders } from "node:http";

/**
 * For tests: a stand-in for "another server that speaks the interface", whose every response
 * the test scripts (errors, Retry-After, answers without logits). Records what it received.
 */

export interface ScriptedResponse {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
  /** Milliseconds to wait before answering (to provoke client timeouts). */
  delayMs?: number;
}

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  url: string;
  body: any;
}

export interface FakeJudgeServer {
  url: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

export async function startFakeJudgeServer(respond: (body: any, index: number) => ScriptedResponse): Promise<FakeJudgeServer> {
  const received: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const body = text ? JSON.parse(text) : undefined;
      received.push({ headers: request.headers, url: request.url ?? "", body });
      const scripted = respond(body, received.length - 1);
      const send = () => {
        if (response.destroyed) return;
        response.writeHead(scripted.status, { "content-type": "application/json", ...scripted.headers });
        response.end(typeof scripted.body === "string" ? scripted.body : JSON.stringify(scripted.body));
      };
      if (scripted.delayMs) setTimeout(send, scripted.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A well-formed reply to `body`, answering every question with the given probabilities. */
export function replyTo(body: any, model = "fake-model", probabilities?: (type: string, labels: string[]) => number[]): ScriptedResponse {
  const answers: Record<string, unknown> = {};
  for (const [id, q] of Object.entries<any>(body.questions)) {
    const labels: string[] =
      q.type === "choice" ? Object.keys(q.criteria) : q.type === "score" ? q.criteria.map((_: unknown, i: number) => String(i)) : ["true", "false"];
    // By default the first label gets 0.6: a judge that favours whatever is listed first.
    const p = probabilities?.(q.type, labels) ?? labels.map((_, i) => (i === 0 ? 0.6 : 0.4 / (labels.length - 1)));
    const keyedP = Object.fromEntries(labels.map((label, i) => [label, p[i]]));
    answers[id] =
      q.type === "noul"
        ? { type: "noul", noul: p[0] }
        : q.type === "choice"
          ? { type: "choice", choice: labels[p.indexOf(Math.max(...p))], probabilities: keyedP }
          : { type: "score", score: p.reduce((sum, pi, i) => sum + i * pi, 0), probabilities: keyedP };
  }
  return { status: 200, body: { model, answers, usage: { input_tokens: 10 } } };
}
