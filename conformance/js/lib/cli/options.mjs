// Integer options as the reference's argparse `type=int` reads them: `--pid -5` is the value
// -5 (argparse takes a negative number as a value; node's parseArgs calls it ambiguous), and a
// value that is not an integer is a usage error (exit 2).

const INT = /^\s*[+-]?\d+(?:_\d+)*\s*$/;

/** `argv` with each of the integer `options` followed by a negative number joined into
 * `--option=-N`, so parseArgs reads it as argparse does.
 * @param {string[]} argv @param {string[]} options */
export function joinNegatives(argv, options) {
  /** @type {string[]} */
  const out = [];
  for (let i = 0; i < argv.length; i++) {
    const next = argv[i + 1];
    if (options.includes(argv[i]) && next !== undefined && /^-\d/.test(next)) {
      out.push(`${argv[i]}=${next}`);
      i++;
    } else out.push(argv[i]);
  }
  return out;
}

/** The integer value of `--name` (undefined: not given), or `usage(message)` thrown.
 * @param {string | undefined} value @param {string} name
 * @param {(message: string) => Error} usage @returns {number | null} */
export function intValue(value, name, usage) {
  if (value === undefined) return null;
  if (!INT.test(value)) throw usage(`argument --${name}: invalid int value: '${value}'`);
  return Number(value.replace(/_/g, ""));
}
