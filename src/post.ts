// The action's `post:` step: a second safety net that removes any container this run started,
// even when the main step was killed before it could clean up.
import * as core from '@actions/core';

export async function post(): Promise<void> {
  const runId = core.getState('run-id');
  if (!runId) return;
  try {
    const { removeRunContainers } = await import('./broker/cleanup');
    const removed = await removeRunContainers(runId);
    if (removed.length) core.info(`Removed ${removed.length} leftover container(s): ${removed.join(', ')}`);
  } catch (e) {
    core.warning(`post-step cleanup: ${(e as Error).message}`);
  }
}

await post();
