import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

import type { SkillDoc } from "@aps/api/route";

export type { SkillDoc } from "@aps/api/route";

/** Path of skill.md in the gateway package (kept in the repo, next to package.json). */
export const SKILL_PATH = fileURLToPath(new URL("../skill.md", import.meta.url));

/** Loads skill.md; throws when its first line is not `SKILL_VERSION: <integer>`. */
export function loadSkill(path = SKILL_PATH): SkillDoc {
  const markdown = readFileSync(path, "utf8");
  const m = /^SKILL_VERSION: (\d+)\r?\n/.exec(markdown);
  if (!m) throw new Error(`${path}: first line must be 'SKILL_VERSION: <n>'`);
  return { markdown, version: Number(m[1]) };
}
