import pg from "pg";
import { PostgresEngine } from "@aps/knowledge";
import { createLogger, openDatabase } from "@aps/platform";
const orig = pg.Client.prototype.query;
pg.Client.prototype.query = function (text, values, cb) {
  if (typeof text === "string" && text.includes("WITH") && values) {
    return orig.call(this, "EXPLAIN (ANALYZE) " + text, values).then((r) => {
      console.log("----\n" + r.rows.map((x) => x["QUERY PLAN"]).filter((l) => /Scan|Execution|CTE [a-z]+$/.test(l)).join("\n"));
      return orig.call(this, text, values);
    });
  }
  return orig.apply(this, arguments);
};
const log = createLogger("sq", "warn");
const db = await openDatabase({ url: process.argv[2], schema: "knowledge", log, poolSize: 2 });
const engine = new PostgresEngine(db, log);
await engine.search(process.argv[3], process.argv[4] ? process.argv[4].split(",") : [], 10);
await db.close();
