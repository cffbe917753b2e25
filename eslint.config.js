// Lint (docs/design/tests.md#checks-beside-the-suite): typescript-eslint with type-aware rules over
// every package and its tests; `npm run lint`, clean in CI (.ci/run). Formatting is Prettier's job,
// not ESLint's. Each rule turned off or relaxed below says why.
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "**/node_modules/**",
      "**/dist/**",
      "proto/src/gen/**",
      "packages/client/src/gen/**",
      "charts/**",
      "coverage/**",
      "test-artifacts/**",
      "test/artifacts/**",
      "test/bench/results/**",
      // a hand-written declaration of a bench module for the tests (checked by tsc, not a program)
      "test/bench/lib/*.d.mts",
      // the declaration of the client's generator for its drift test (checked by tsc)
      "packages/client/scripts/*.d.mts",
      // the declaration of the endpoints page's generator for its test (checked by tsc)
      "scripts/*.d.mts",
      ".turbo/**",
    ],
  },
  { linterOptions: { reportUnusedDisableDirectives: "error" } },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    rules: {
      // Control characters in the regexes are the point: they strip or reject them from input.
      "no-control-regex": "off",
      // A variable read by a closure before its single assignment (a span started later) stays `let`.
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
    },
  },
  {
    files: ["**/*.ts"],
    languageOptions: {
      parserOptions: {
        // Tests sit outside each package's build tsconfig.json: tsconfig.eslint.json covers every
        // workspace's source and tests as one program (one per workspace loaded the same types 17
        // times; docs/design/tests.md#checks-beside-the-suite).
        project: ["./tsconfig.eslint.json", "./test/tsconfig.json"],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Kept on and fixed: no-floating-promises, no-misused-promises, await-thenable,
      // no-unsafe-* in source, no-explicit-any in source.
      // `_`-prefixed names are deliberately unused (an express error handler's `next`, a destructured rest).
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true },
      ],
      // An `async` function without `await` is deliberate here: it implements a Promise-returning
      // interface (EventBus, handlers) and turns a throw into a rejection.
      "@typescript-eslint/require-await": "off",
    },
  },
  {
    // Tests read JSON answers whose shape is what they assert: typing every body would restate
    // the assertion. Unsafe `any` access is allowed in tests only; the types of the code under test
    // are still checked by `npm run typecheck`.
    files: ["**/*.test.ts", "test/**/*.ts", "packages/testkit/**/*.ts"],
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      // jest's `expect(obj.method).toHaveBeenCalled()`-style references to methods
      "@typescript-eslint/unbound-method": "off",
    },
  },
  {
    // Plain JavaScript (scripts, the deploy/local launcher, jest and eslint config, bench): no type information.
    files: ["**/*.js", "**/*.mjs", "**/*.cjs"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { ...globals.node },
    },
  },
  {
    // The web pages' progressive enhancement runs in the browser.
    files: ["packages/web/web-assets/**/*.js"],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs" },
    // CommonJS is what jest loads reporters as
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
