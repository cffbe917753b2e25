import { plainText } from "./markup.js";

describe("plainText", () => {
  it("reads reST roles, drops rules and directives", () => {
    const src =
      "Abstract\n========\n\nSee :pep:`484` and :rfc:`7230`; call :func:`len`.\n\n.. code-block:: python\n\n   x = 1\n";
    const out = plainText(src);
    expect(out).toContain("See PEP 484 and RFC 7230; call len.");
    expect(out).not.toMatch(/===|:pep:|code-block|`/);
    expect(out).toContain("x = 1");
  });
  it("strips Markdown headings, emphasis, code and link targets", () => {
    expect(
      plainText("## Title\nSome **bold** and *it* and `code`, see [docs](https://x.y/z).").replace(/\n/g, " "),
    ).toBe("Title Some bold and it and code, see docs.");
  });
  it("keeps reST link text and literal-block colons", () => {
    expect(plainText("Read `the guide <https://x.y>`_ first. Example::")).toBe("Read the guide first. Example:");
  });
});
