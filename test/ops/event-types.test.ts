import { EVENT_TYPES } from "@aps/gateway/openapi/events";
import { PUBLIC_EVENT_TYPES } from "@aps/notifications";

/** The gateway validates and documents exactly the public event types the notifications service produces (docs/adr/0125). */
describe("public event types", () => {
  it("are the same list in the gateway (OpenAPI, validation) and in the notifications service", () => {
    expect([...EVENT_TYPES]).toEqual([...PUBLIC_EVENT_TYPES]);
  });
});
