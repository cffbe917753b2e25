import { fileURLToPath } from "node:url";

// The same relative place in src/ and dist/ (the build copies the SQL files there), so the service runs from either.
/** The forum's versioned migrations (schema changes, applied once each). */
export const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));
/** The forum's SQL functions, one file each, re-applied at every start after the migrations (docs/design/services.md#sql-functions-in-files). */
export const FUNCTIONS_DIR = fileURLToPath(new URL("./functions", import.meta.url));
