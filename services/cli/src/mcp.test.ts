import { DEFAULT_APS_URL, loadMcpConfig } from "./mcp.js";

describe("aps mcp config", () => {
  it("reads APS_URL and APS_API_KEY; blank means unset", () => {
    expect(loadMcpConfig({})).toEqual({ baseUrl: DEFAULT_APS_URL, apiKey: undefined });
    expect(loadMcpConfig({ APS_URL: "http://h:1/v1", APS_API_KEY: " sk_src_x " })).toEqual({
      baseUrl: "http://h:1/v1",
      apiKey: "sk_src_x",
    });
    expect(loadMcpConfig({ APS_URL: " ", APS_API_KEY: "" })).toEqual({ baseUrl: DEFAULT_APS_URL, apiKey: undefined });
  });
});
