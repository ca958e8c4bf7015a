import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  LABEL,
  RUN_LABEL,
  defaultRunId,
  drainBeforeSignalExit,
  installCleanupHandlers,
  labelArgs,
  registerContainer,
  removeRegistered,
  removeRunContainers
} from "./chunk-6WY7LTPX.js";
import "./chunk-FDGYIFXX.js";
export {
  LABEL,
  RUN_LABEL,
  defaultRunId,
  drainBeforeSignalExit,
  installCleanupHandlers,
  labelArgs,
  registerContainer,
  removeRegistered,
  removeRunContainers
};
