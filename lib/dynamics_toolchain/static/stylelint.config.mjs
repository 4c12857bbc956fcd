// stylelint for the book's styles (dynamics_toolchain.scripts.lint_css; tests/toolchain/test_scripts.py):
// a syntax error fails, and so does what a browser would drop without a word (an unknown
// property, unit, pseudo-class or at-rule, an invalid hex colour, a duplicate property).
export default {
  rules: {
    "at-rule-no-unknown": true,
    "block-no-empty": true,
    "color-no-invalid-hex": true,
    "declaration-block-no-duplicate-properties": true,
    "declaration-block-no-shorthand-property-overrides": true,
    "function-calc-no-unspaced-operator": true,
    "media-feature-name-no-unknown": true,
    "no-invalid-double-slash-comments": true,
    "property-no-unknown": true,
    "selector-pseudo-class-no-unknown": true,
    "selector-pseudo-element-no-unknown": true,
    "string-no-newline": true,
    "unit-no-unknown": true,
  },
};
