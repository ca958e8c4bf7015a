// Types of bench/lib/args.mjs for the TypeScript benches (bundled by bench/lib/common.mjs).
export declare const IMAGES: { v3: string; v4: string };
type ListSpec = { kind: 'list'; fallback: unknown; numbers: false };
type NumberListSpec = { kind: 'list'; fallback: unknown; numbers: true };
type OptionalNumberSpec = { kind: 'optional-number' };
type OptionalSpec = { kind: 'optional-string' } | OptionalNumberSpec;
export declare function list(fallback: string | string[]): ListSpec;
export declare function numberList(fallback: string | number[]): NumberListSpec;
export declare function optional(kind: 'number'): OptionalNumberSpec;
export declare function optional(kind?: 'string'): { kind: 'optional-string' };
export declare function brokerOptions(broker?: string): { broker: string; image: string; url: string; management: string };
export declare function headerOf(file: string): string;
type Spec = Record<string, number | string | boolean | string[] | ListSpec | NumberListSpec | OptionalSpec>;
type Value<D> = D extends number
  ? number
  : D extends boolean
    ? boolean
    : D extends string[]
      ? string[]
      : D extends string
        ? string
        : D extends NumberListSpec
          ? number[]
          : D extends ListSpec
            ? string[]
            : D extends OptionalNumberSpec
              ? number | undefined
              : D extends { kind: 'optional-string' }
                ? string | undefined
                : never;
export declare function benchArgs<S extends Spec>(
  spec: S,
  opts?: { argv?: string[]; script?: string; help?: string; positionals?: boolean },
): { values: { [K in keyof S]: Value<S[K]> }; positionals: string[] };
