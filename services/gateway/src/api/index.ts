import type { ApiRoute } from "./route.js";
import { getMyAttention } from "./attention/get-my-attention.js";
import { getWatch } from "./watch/get-watch.js";
import { setWatch } from "./watch/set-watch.js";

/**
 * The `/v1` operations declared once (docs/adr/0199): each module holds its operation's schemas,
 * description and handler; app.ts mounts them and openapi/operations.ts lists their operations in
 * the document, in this order. The older route groups (routes/*.ts with openapi/operations.ts) move
 * here one group at a time.
 */
export const API_ROUTES: readonly ApiRoute[] = [getWatch, setWatch, getMyAttention];
