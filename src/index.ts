// Entry point of the action (action.yml `main`): run the orchestrator.
import { run } from './main';

await run();
