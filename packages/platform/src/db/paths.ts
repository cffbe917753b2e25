import { fileURLToPath } from "node:url";

/** Folder of the platform's own migrations (outbox, processed_events), applied with every service's. */
export const PLATFORM_MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));
