import { exportInstance, importInstance } from "./instance-export.js";

/** The value after `--<name>` in `args`, or undefined. */
function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

/**
 * `aps export --out <dir>` (docs/operations/export-import.md#export): writes the export and prints
 * one JSON line `{dir, exportedAt, rows}` (rows per table).
 * @returns false on bad usage (no `--out`).
 */
export async function exportCommand(args: string[]): Promise<boolean> {
  const out = option(args, "out");
  if (!out) return false;
  const { manifest } = await exportInstance(out);
  const rows = Object.fromEntries(manifest.tables.map((t) => [`${t.schema}.${t.table}`, t.rows]));
  console.log(JSON.stringify({ dir: out, exportedAt: manifest.exportedAt, rows }));
  return true;
}

/**
 * `aps import --in <dir> [--keys <file>]` (docs/operations/export-import.md#import): loads the
 * export and prints one JSON line `{rows, keysIssued}`.
 * @returns false on bad usage (no `--in`).
 */
export async function importCommand(args: string[]): Promise<boolean> {
  const dir = option(args, "in");
  if (!dir) return false;
  const keysFile = option(args, "keys");
  const summary = await importInstance(dir, keysFile ? { keysFile } : {});
  console.log(JSON.stringify(summary));
  return true;
}
