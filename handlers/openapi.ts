// The contract documents of every mounted route, for tools outside the server (the SDK's type generation): the
// same objects GET /v1/openapi.json and GET /v1/asyncapi.json serve.
import { Metrics } from "../runtime/metrics.ts";
import { buildAsyncApiDocument, type AsyncApiDocument } from "../schema/openapi/asyncapi.ts";
import { buildOpenApiDocument, type OpenApiDocument } from "../schema/openapi/document.ts";
import { allRoutes } from "./index.ts";

/** The OpenAPI 3.1 document of the service. */
export function openApiDocument(): OpenApiDocument {
  return buildOpenApiDocument(allRoutes(new Metrics()));
}

/** The AsyncAPI 3 document of the WebSocket. */
export function asyncApiDocument(): AsyncApiDocument {
  return buildAsyncApiDocument();
}
