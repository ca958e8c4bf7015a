// The `looks` input (action) and `--looks` option (CLI) of a group-sequential A/B: increasing whole
// numbers of pairs, each at least 3 (the smallest paired test), the last being the cap.
import { GateError } from '../schema/errors';

export function parseLooks(raw: string, field: string): number[] {
  const looks = raw.split(',').map((x) => Number(x.trim()));
  if (!raw.trim() || looks.some((n, i) => !Number.isInteger(n) || n < 3 || (i > 0 && n <= looks[i - 1]))) {
    throw new GateError(`${field} must be increasing whole numbers of pairs, each at least 3, separated by commas, got "${raw}"`, { field }, 'e.g. 8,12,16,24,32');
  }
  return looks;
}
