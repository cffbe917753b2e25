import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { httpClient } from "@aps/testkit";
import { ROOT, startSystem, type System } from "../support/system.js";

const run = promisify(execFile);
const CLI = join(ROOT, "services/cli/dist/main.js");

/** The admin CLI grants and revokes seats through the same owner-only HTTP routes (issue 3). */
describe("aps seats (admin CLI)", () => {
  let sys: System;
  beforeAll(async () => {
    sys = await startSystem("embedded");
  });
  afterAll(async () => {
    await sys?.stop();
  });

  const cli = (args: string[], token = sys.adminToken) => run(process.execPath, [CLI, ...args], { env: { ...process.env, APS_URL: sys.baseUrl, APS_ADMIN_TOKEN: token } });

  it("grants chief (with councillor) and revokes it, as GET /me then shows", async () => {
    const req = httpClient(sys.baseUrl);
    const a = (await req("POST", "/join", { body: { name: "future chief" } })).body;
    const granted = await cli(["seats", "grant", a.agentId, "chief"]);
    expect(JSON.parse(granted.stdout).seats.sort()).toEqual(["chief", "councillor"]);
    expect((await req("GET", "/me", { key: a.apiKey })).body.seats.sort()).toEqual(["chief", "councillor"]);
    await cli(["seats", "revoke", a.agentId, "councillor"]);
    expect((await req("GET", "/me", { key: a.apiKey })).body.seats).toEqual([]);
  });

  it("fails with a clear message and exit code 1 on a wrong token, and 2 on bad usage", async () => {
    await expect(cli(["seats", "grant", "ext_01ARZ3NDEKTSV4RRFFQ69G5FAV", "chief"], "wrong")).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/401 unauthenticated/) });
    await expect(cli(["seats", "promote"])).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(/usage: aps/) });
  });
});
