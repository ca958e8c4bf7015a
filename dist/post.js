import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  getState,
  info,
  warning
} from "./chunks/chunk-YJIEOFOU.js";
import "./chunks/chunk-FDGYIFXX.js";

// src/post.ts
async function post() {
  const runId = getState("run-id");
  if (!runId) return;
  try {
    const { removeRunContainers } = await import("./chunks/cleanup-VYUYTSGP.js");
    const removed = await removeRunContainers(runId);
    if (removed.length) info(`Removed ${removed.length} leftover container(s): ${removed.join(", ")}`);
  } catch (e) {
    warning(`post-step cleanup: ${e.message}`);
  }
}
await post();
export {
  post
};
