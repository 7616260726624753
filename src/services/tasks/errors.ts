/** A task body, an example or a fit request the client must fix: 400 invalid_request, its message naming the example and field. */
export class TaskInputError extends Error {
  override name = "TaskInputError";
}

/** A fit asked of an instance that is stopping: 503 service_unavailable, to be asked again of another. */
export class TasksStoppingError extends Error {
  override name = "TasksStoppingError";
}
