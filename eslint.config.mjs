import * as effectEslint from "@effect/eslint-plugin"
import tseslint from "typescript-eslint"

/**
 * The house style, kept by the machine: Effect's dprint formatting, 120 columns, with import
 * declarations sorted (dprint sorts them within each block). `npm run lint` checks it;
 * `npx eslint --fix .` applies it.
 */
export default tseslint.config(
  { ignores: ["**/dist", "**/node_modules", "**/.trading-data"] },
  {
    files: ["**/*.ts", "**/*.tsx", "**/*.mjs"],
    extends: [...effectEslint.configs.dprint],
    languageOptions: { parser: tseslint.parser },
    rules: {
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force",
          "module.sortImportDeclarations": "caseInsensitive",
          "exportDeclaration.sortNamedExports": "caseInsensitive",
          "importDeclaration.sortNamedImports": "caseInsensitive"
        }
      }]
    }
  }
)
