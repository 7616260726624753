import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { show, type CapturedResponse } from "./http-client.js";

/**
 * Checks real responses against an OpenAPI 3.1 document: the status must be documented for the
 * path and method, the content type listed, every documented header present, and the body valid
 * against the documented schema (JSON Schema 2020-12, with `#/components/schemas/...` refs).
 */
export interface OpenApiConformance {
  /** Throws, with the whole response in the message, when the response does not match the document. */
  check(response: CapturedResponse): void;
  /** The validator for one documented response body, for checking examples directly. */
  validatorFor(path: string, method: string, status: number, contentType?: string): ValidateFunction;
}

const BASE = "urn:tjs:openapi";

export function openApiConformance(document: any): OpenApiConformance {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  // The document's schemas, addressable as urn:tjs:openapi#/$defs/<Name>.
  ajv.addSchema(withAbsoluteRefs({ $id: BASE, $defs: document.components?.schemas ?? {} }));
  const compiled = new Map<string, ValidateFunction>();

  function documented(path: string, method: string, status: number) {
    const operation = document.paths?.[path]?.[method.toLowerCase()];
    if (!operation) throw new Error(`${method.toUpperCase()} ${path} is not in the document`);
    const entry = operation.responses?.[String(status)] ?? operation.responses?.[`${String(status)[0]}XX`] ?? operation.responses?.default;
    if (!entry) {
      throw new Error(
        `status ${status} is not documented for ${method.toUpperCase()} ${path} (documented: ${Object.keys(operation.responses ?? {}).join(", ")})`,
      );
    }
    return entry;
  }

  function validatorFor(path: string, method: string, status: number, contentType = "application/json") {
    const cacheKey = `${method} ${path} ${status} ${contentType}`;
    const cached = compiled.get(cacheKey);
    if (cached) return cached;
    const media = documented(path, method, status).content?.[contentType];
    if (!media) throw new Error(`${method.toUpperCase()} ${path} ${status}: content type ${contentType} is not documented`);
    if (!media.schema) throw new Error(`${method.toUpperCase()} ${path} ${status} ${contentType}: no schema`);
    const validate = ajv.compile(withAbsoluteRefs(media.schema));
    compiled.set(cacheKey, validate);
    return validate;
  }

  function check(response: CapturedResponse): void {
    const fail = (why: string): never => {
      throw new Error(`response does not match the OpenAPI document: ${why}\n${show(response)}`);
    };
    let entry: any;
    try {
      entry = documented(response.path, response.method, response.status);
    } catch (error) {
      fail((error as Error).message);
    }
    for (const header of Object.keys(entry.headers ?? {})) {
      if (!response.headers.has(header)) fail(`documented header ${header} is missing`);
    }
    const contentType = (response.headers.get("content-type") ?? "").split(";")[0].trim();
    if (!entry.content) {
      if (response.text !== "") fail("a body was sent where the document describes none");
      return;
    }
    if (!entry.content[contentType]) fail(`content type "${contentType}" is not documented (documented: ${Object.keys(entry.content).join(", ")})`);
    if (contentType === "application/json" && response.json === undefined) fail("the body is not JSON");
    const validate = validatorFor(response.path, response.method, response.status, contentType);
    if (!validate(response.json)) fail(`the body does not match the schema: ${ajv.errorsText(validate.errors, { separator: "; " })}`);
  }

  return { check, validatorFor };
}

/** Rewrites `#/components/schemas/X` refs to absolute refs into the schema added above. */
function withAbsoluteRefs<T>(schema: T): T {
  return JSON.parse(JSON.stringify(schema).replaceAll('"$ref":"#/components/schemas/', `"$ref":"${BASE}#/$defs/`));
}
