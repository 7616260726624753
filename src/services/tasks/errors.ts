/** A task body, an example or a fit request the client must fix: 400 invalid_request, its message naming the example and field. */
export class TaskInputError extends Error {
  override name = "TaskInputError";
}
