// The fast path (src/workload/wire.ts) leans on amqplib internals: the dependency is pinned to the
// exact release it was verified against, and this test fails when package.json's pin, the
// installed package or wire-check.ts's VERIFIED_AMQPLIB disagree.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { VERIFIED_AMQPLIB } from '../../src/workload/wire-check';

const root = join(__dirname, '../..');
const json = (p: string) => JSON.parse(readFileSync(join(root, p), 'utf8')) as Record<string, any>;

describe('amqplib pin', () => {
  it('package.json pins amqplib exactly to the version the fast path was verified against', () => {
    expect(json('package.json').dependencies.amqplib).toBe(VERIFIED_AMQPLIB);
  });
  it('the installed amqplib (and the lock file) is that version', () => {
    expect(json('node_modules/amqplib/package.json').version).toBe(VERIFIED_AMQPLIB);
    expect(json('package-lock.json').packages['node_modules/amqplib'].version).toBe(VERIFIED_AMQPLIB);
  });
});
