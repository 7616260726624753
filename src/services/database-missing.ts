/** The CLI's administration commands refuse a database that is not this service's yet. */
export { DatabaseMissingError } from "../store/store.js";
