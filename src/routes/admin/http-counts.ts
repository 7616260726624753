import type { Metrics } from "../../services/metrics.js";

/** Responses of this process by status class, read from its own Prometheus counters. */
export interface HttpCounts {
  /** When this process started (ms), from process_start_time_seconds. */
  since: number | null;
  requests: number;
  status2xx: number;
  status4xx: number;
  status5xx: number;
}

/**
 * The operator's own console and admin calls are not the service's traffic, nor are probes: a
 * /health 503 while the model loads (or a scrape of /metrics) is no server error of the service.
 */
const OWN_ROUTES = /^\/(admin|console|health|metrics)(\/|$)/;

/**
 * The service's requests by status class since this process started, summed over routes from
 * judge_http_requests_total. Per process: behind a load balancer, each instance counts its own.
 */
export async function httpCounts(metrics: Metrics): Promise<HttpCounts> {
  const { text } = await metrics.render();
  const counts: HttpCounts = { since: null, requests: 0, status2xx: 0, status4xx: 0, status5xx: 0 };
  for (const line of text.split("\n")) {
    const started = /^process_start_time_seconds (\S+)$/.exec(line);
    if (started) counts.since = Math.round(Number(started[1]) * 1000);
    const sample = /^judge_http_requests_total\{(.*)\} (\S+)$/.exec(line);
    if (!sample) continue;
    const labels = Object.fromEntries([...sample[1].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (OWN_ROUTES.test(labels.route ?? "")) continue;
    const value = Number(sample[2]);
    counts.requests += value;
    if (labels.status?.startsWith("2")) counts.status2xx += value;
    if (labels.status?.startsWith("4")) counts.status4xx += value;
    if (labels.status?.startsWith("5")) counts.status5xx += value;
  }
  return counts;
}
