// Entry point of the action (action.yml `main`): run the orchestrator.
import { run } from './main';

await run();
// Nothing may keep a finished step alive: a socket to a hung broker (or any other stray handle)
// would otherwise hold the runner until the job's own timeout.
setTimeout(() => process.exit(), 3_000).unref();
