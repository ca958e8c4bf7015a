import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  LABEL,
  OWNER_LABELS,
  RUN_LABEL,
  defaultRunId,
  describeContainer,
  drainBeforeSignalExit,
  installCleanupHandlers,
  interruptible,
  labelArgs,
  labelledContainers,
  ownerState,
  registerContainer,
  removeRegistered,
  removeRunContainers,
  selfOwner,
  sweepOrphans
} from "./chunk-DAQL4HVU.js";
import "./chunk-FDGYIFXX.js";
export {
  LABEL,
  OWNER_LABELS,
  RUN_LABEL,
  defaultRunId,
  describeContainer,
  drainBeforeSignalExit,
  installCleanupHandlers,
  interruptible,
  labelArgs,
  labelledContainers,
  ownerState,
  registerContainer,
  removeRegistered,
  removeRunContainers,
  selfOwner,
  sweepOrphans
};
