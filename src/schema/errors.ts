// User-facing errors. A GateError carries where the problem is (file, line, field) and how to
// fix it; the CLI prints it as one line and the action turns it into an annotation. Anything
// that is not a GateError is a bug or an environment failure and is reported by its message only.

export interface Where {
  file?: string;
  line?: number;
  field?: string;
}

export class GateError extends Error {
  constructor(
    message: string,
    readonly where: Where = {},
    readonly fix?: string,
  ) {
    super(message);
    this.name = 'GateError';
  }

  /** One line: "file:line: field: message. Fix: …" (without file:line for annotations that carry it). */
  describe(withLocation = true): string {
    const loc = withLocation ? [this.where.file, this.where.line].filter((x) => x !== undefined).join(':') : '';
    const field = this.where.field ? `${this.where.field}: ` : '';
    const fix = this.fix ? ` Fix: ${this.fix}` : '';
    return `${loc ? `${loc}: ` : ''}${field}${this.message}${fix}`;
  }
}

/** The one sentence to show a user for any thrown value, never a stack trace. */
export function describeError(err: unknown): string {
  if (err instanceof GateError) return err.describe();
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return code && !err.message.includes(code) ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}
