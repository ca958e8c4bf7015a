// The GateError a call throws, for tests of the one clear error bad input gets: any other error,
// or none, fails the test.
import { GateError } from '../../src/schema/errors';

export function gateErrorOf(fn: () => unknown): GateError {
  try {
    fn();
  } catch (e) {
    if (e instanceof GateError) return e;
    throw e;
  }
  throw new Error('expected a GateError');
}
