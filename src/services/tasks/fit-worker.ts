import { parentPort } from "node:worker_threads";
import { fitQuestionHead, type FitOptions, type LabelledRow } from "../../judgment/heads/index.js";
import { messageOf } from "../../error-message.js";

/**
 * The worker thread that fits heads (head-fitter.ts starts it): one question per message, so
 * seconds of optimisation never hold up the instance's event loop and the requests it serves.
 */
const port = parentPort!;
port.on("message", ({ rows, options }: { rows: LabelledRow[]; options: FitOptions }) => {
  try {
    const { head, report } = fitQuestionHead(rows, options);
    port.postMessage({ head, report });
  } catch (error) {
    port.postMessage({ error: messageOf(error) });
  }
});
