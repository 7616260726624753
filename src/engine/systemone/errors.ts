/**
 * The request is over the upstream server's limits (options per choice, levels per score,
 * questions per request): a 400 `over_upstream_limit`, raised while preparing, so nothing has
 * been sent upstream or held. Not a BudgetError: the client can fix it only by splitting the
 * request, not by shortening text, and the code says which limit it met.
 */
export class UpstreamLimitError extends Error {
  override name = "UpstreamLimitError";
  /** The question (index in prompt order) over a limit, when one question is the cause. */
  readonly questionIndex?: number;
  constructor(message: string, questionIndex?: number) {
    super(message);
    this.questionIndex = questionIndex;
  }
}
