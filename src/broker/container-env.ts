// How a container the gate starts gets its environment: by one rule, with where every value came
// from. The image's own declarations stay in effect (its ENV, read with `docker image inspect`, and
// the Erlang flags of the rabbitmq-env.conf it ships); the target file's `env` replaces the image's
// value of the same variable, on purpose; the gate's own flags — the cookie every node and
// rabbitmqctl share, `+JPperf true` for flame graphs — are appended to the Erlang args variables
// whatever their value (later flags override earlier ones, so the gate's come last and touch
// nothing else); node names and ports are the gate's. Pure: src/broker/docker.ts reads the inputs
// and applies the result; the report shows `declared` (src/report/effective.ts) and
// src/broker/effective.ts checks it against what the node runs.
import { GateError } from '../schema/errors';
import type { DeclaredEnv, DeclaredPart, ValueSource } from '../schema/types';

/** Env names whose values are secrets: masked in logs, reports and baseline files. */
export const SECRET_NAME = /PASS|SECRET|TOKEN|COOKIE|KEY|CREDENTIAL/i;
export const MASK = '***';

/** The Erlang args variables the gate sets: the server's flags and the CLI tools' flags. */
export const ERL_ARGS_VARS = ['RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS', 'RABBITMQ_CTL_ERL_ARGS'] as const;
/** Per-node variables the gate assigns under host networking. */
const NODE_VARS = ['RABBITMQ_NODENAME', 'ERL_EPMD_PORT', 'RABBITMQ_DIST_PORT'] as const;

export const DEFAULT_PLUGINS_FILE = '/etc/rabbitmq/enabled_plugins';
export const DEFAULT_CONF_ENV_FILE = '/etc/rabbitmq/rabbitmq-env.conf';

/** What an image declares about its broker's environment. */
export interface ImageDeclarations {
  /** Its ENV (`Config.Env`). */
  env: Record<string, string>;
  /** Simple `NAME=value` assignments of the rabbitmq-env.conf it ships (parseEnvConf). */
  envConf?: Record<string, string>;
  /** Names that file assigns with a shell expansion (not evaluated here). */
  envConfUnevaluated?: string[];
}

/** The gate's own settings for one node. */
export interface GateSettings {
  cookie: string;
  /** Start the server with `+JPperf true` (src/broker/profile.ts). */
  profile?: boolean;
  /** Host networking: this node's name and the ports the gate assigned it. */
  node?: { name: string; epmdPort: number; distPort: number };
}

export interface ComposedEnv {
  /** The variables to pass with `docker create -e` (the image's other ENV stays as it is). */
  pass: Record<string, string>;
  /** Every variable in the container: the image's ENV with `pass` over it. */
  effective: Record<string, string>;
  /** The RabbitMQ and Erlang variables in effect, the target's and the gate's, each with where its
   *  parts came from (secrets masked). */
  declared: DeclaredEnv[];
  /** What the gate had to drop or replace, one sentence each. */
  warnings: string[];
}

/** The value of `name` in the container before the gate's own: the target's, else the image's. */
export function inEffect(name: string, image: Record<string, string>, target: Record<string, string>): string | undefined {
  return target[name] ?? image[name];
}

/** `NAME=value` assignments of a rabbitmq-env.conf (a shell file; quotes removed). Values with a
 *  shell expansion cannot be evaluated here and are listed in `unevaluated`. */
export function parseEnvConf(text: string): { values: Record<string, string>; unevaluated: string[] } {
  const values: Record<string, string> = {};
  const unevaluated: string[] = [];
  for (const raw of text.split('\n')) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*?)\s*$/.exec(raw);
    if (!m) continue;
    let v = m[2];
    const quoted = /^"(.*)"$/.exec(v) ?? /^'(.*)'$/.exec(v);
    if (quoted) v = quoted[1];
    else v = v.replace(/\s+#.*$/, '');
    if (/[$`]/.test(v) && !/^'.*'$/.test(m[2])) unevaluated.push(m[1]);
    else values[m[1]] = v;
  }
  return { values, unevaluated };
}

/** An args value without its `-setcookie X` (the gate's cookie must be the only one). */
export function stripCookie(args: string): { rest: string; dropped: boolean } {
  const rest = args
    .replace(/(^|\s)-setcookie\s+\S+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return { rest, dropped: rest !== args.replace(/\s+/g, ' ').trim() };
}

/** A value as it may be shown: secrets masked, a cookie in an args value too. */
export function maskValue(name: string, value: string): string {
  if (SECRET_NAME.test(name)) return MASK;
  return value.replace(/(-setcookie\s+)\S+/g, `$1${MASK}`);
}

const SOURCE: Record<ValueSource, string> = { image: 'image', target: 'target file', gate: 'the gate', scenario: 'a scenario' };

/** Where a part came from, for a reader: "image ENV", "target file", "the gate". */
export function describeSource(p: Pick<DeclaredPart, 'from' | 'where'>): string {
  return p.where ? `${SOURCE[p.from]} ${p.where}` : SOURCE[p.from];
}

/** One variable for the log and the report: `NAME = +S 2:1 (image ENV) -setcookie *** (the gate)`. */
export function describeEnv(d: DeclaredEnv): string {
  const value = d.parts.map((p) => `${p.value || '""'} (${describeSource(p)})`).join(' ');
  const replaced = d.replaced?.length ? `; replaces ${d.replaced.map((p) => `${p.value || '""'} (${describeSource(p)})`).join(', ')}` : '';
  return `${d.name} = ${value}${replaced}`;
}

/**
 * The environment of one node's container. For each variable the gate sets:
 * - RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS and RABBITMQ_CTL_ERL_ARGS: the target file's value if it
 *   sets the variable (on purpose, even empty), else the image's (its ENV, else its
 *   rabbitmq-env.conf's SERVER_ADDITIONAL_ERL_ARGS / CTL_ERL_ARGS), without any `-setcookie`; then
 *   the gate's `-setcookie <cookie>` (and, for the server when profiling, `+JPperf true`);
 * - RABBITMQ_NODENAME, ERL_EPMD_PORT, RABBITMQ_DIST_PORT (host networking): the gate's;
 * - RABBITMQ_ENABLED_PLUGINS_FILE, when the image or target points it elsewhere: the gate's file
 *   in /etc/rabbitmq, which holds that file's plugins (layoutConfig).
 * Every other variable of the target file is passed as it is (replacing the image's); the image's
 * other ENV stays in effect untouched.
 */
export function composeEnv(image: ImageDeclarations, target: Record<string, string>, gate: GateSettings): ComposedEnv {
  const pass: Record<string, string> = {};
  const declared = new Map<string, DeclaredEnv>();
  const warnings: string[] = [];
  const imagePart = (name: string): DeclaredPart | undefined => (image.env[name] !== undefined ? { value: maskValue(name, image.env[name]), from: 'image', where: 'ENV' } : undefined);
  const declare = (name: string, parts: DeclaredPart[], replaced?: DeclaredPart) => declared.set(name, { name, parts, ...(replaced ? { replaced: [replaced] } : {}) });

  for (const [name, value] of Object.entries(target)) {
    pass[name] = value;
    const was = imagePart(name);
    declare(name, [{ value: maskValue(name, value), from: 'target' }], was && image.env[name] !== value ? was : undefined);
  }
  for (const name of ERL_ARGS_VARS) {
    const short = name.replace(/^RABBITMQ_/, '');
    if (image.envConf?.[name] !== undefined || image.envConfUnevaluated?.includes(name)) {
      throw new GateError(
        `the image's rabbitmq-env.conf sets ${name}, which overrides the environment the gate starts the node with (its cookie could not reach the node)`,
        { field: 'image' },
        `set ${short} (without the RABBITMQ_ prefix) in rabbitmq-env.conf, or ${name} with ENV in the Dockerfile`,
      );
    }
    const fromImage: DeclaredPart | undefined =
      imagePart(name) ?? (image.envConf?.[short] !== undefined ? { value: maskValue(name, image.envConf[short]), from: 'image', where: 'rabbitmq-env.conf' } : undefined);
    const imageValue = image.env[name] ?? image.envConf?.[short];
    const own = target[name] !== undefined;
    if (!own && image.env[name] === undefined && image.envConfUnevaluated?.includes(short)) {
      warnings.push(
        `the image's rabbitmq-env.conf sets ${short} with a shell expansion the gate cannot evaluate, so it is not in effect (the node gets ${name} from the gate); set ${name} with ENV in the Dockerfile instead`,
      );
    }
    const base = own ? target[name] : (imageValue ?? '');
    const { rest, dropped } = stripCookie(base);
    if (dropped) {
      warnings.push(`${name}: the ${own ? 'target file' : 'image'}'s -setcookie is dropped: the gate sets its own cookie, which every node and rabbitmqctl must share`);
    }
    const gateParts = [`-setcookie ${gate.cookie}`, ...(gate.profile && name === 'RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS' ? ['+JPperf true'] : [])];
    pass[name] = [rest, ...gateParts].filter(Boolean).join(' ');
    const parts: DeclaredPart[] = [
      ...(rest || own ? [{ value: maskValue(name, rest), from: own ? ('target' as const) : ('image' as const), ...(own ? {} : { where: fromImage?.where }) }] : []),
      ...gateParts.map((v) => ({ value: maskValue(name, v), from: 'gate' as const })),
    ];
    declare(name, parts, own && fromImage && imageValue !== target[name] ? fromImage : undefined);
  }
  if (gate.node) {
    const values: Record<(typeof NODE_VARS)[number], string> = {
      RABBITMQ_NODENAME: gate.node.name,
      ERL_EPMD_PORT: String(gate.node.epmdPort),
      RABBITMQ_DIST_PORT: String(gate.node.distPort),
    };
    for (const name of NODE_VARS) {
      const before = inEffect(name, image.env, target);
      const was: DeclaredPart | undefined = target[name] !== undefined ? { value: target[name], from: 'target' } : imagePart(name);
      if (before !== undefined) {
        warnings.push(`${name}=${before} from the ${was?.from === 'target' ? 'target file' : 'image'} is replaced by the gate's ${values[name]}: the gate names the nodes and assigns their ports`);
      }
      pass[name] = values[name];
      declare(name, [{ value: values[name], from: 'gate' }], was);
    }
  }
  const pluginsFile = inEffect('RABBITMQ_ENABLED_PLUGINS_FILE', image.env, target);
  if (pluginsFile !== undefined && pluginsFile !== DEFAULT_PLUGINS_FILE) {
    pass.RABBITMQ_ENABLED_PLUGINS_FILE = DEFAULT_PLUGINS_FILE;
    declare(
      'RABBITMQ_ENABLED_PLUGINS_FILE',
      [{ value: DEFAULT_PLUGINS_FILE, from: 'gate', where: `(holds the plugins of ${pluginsFile})` }],
      target.RABBITMQ_ENABLED_PLUGINS_FILE !== undefined ? { value: pluginsFile, from: 'target' } : imagePart('RABBITMQ_ENABLED_PLUGINS_FILE'),
    );
  }
  // The image's own RabbitMQ and Erlang variables stay in effect: shown with where they came from.
  for (const [name, value] of Object.entries(image.env)) {
    if (!declared.has(name) && /^(RABBITMQ_|ERL_)/.test(name)) declare(name, [{ value: maskValue(name, value), from: 'image', where: 'ENV' }]);
  }
  return {
    pass,
    effective: { ...image.env, ...pass },
    declared: [...declared.values()].sort((a, b) => a.name.localeCompare(b.name)),
    warnings,
  };
}

/** The declarations for the log and the report, one line each: variables, plugins, files. */
export function describeDeclared(d: { env: DeclaredEnv[]; plugins: Array<{ name: string; from: ValueSource }>; files: Array<{ path: string; from: ValueSource; replaces?: boolean }> }): string[] {
  const bySource = new Map<ValueSource, string[]>();
  for (const p of d.plugins) bySource.set(p.from, [...(bySource.get(p.from) ?? []), p.name]);
  return [
    ...d.env.map(describeEnv),
    `enabled_plugins: ${[...bySource].map(([from, names]) => `${names.join(', ')} (${SOURCE[from]})`).join('; ') || 'none'}`,
    `/etc/rabbitmq: ${d.files.map((f) => `${f.path} (${SOURCE[f.from]}${f.replaces ? ", replaces the image's" : ''})`).join(', ')}`,
  ];
}
