// Fault injection: queued misbehaviours that the next requests for a route suffer.

export const ROUTE_NAMES = ['me', 'sources', 'create', 'complete', 'list', 'upload'] as const;
export type RouteName = (typeof ROUTE_NAMES)[number];

export interface Fault {
  route: RouteName;
  /** How many requests for the route this fault applies to; default 1. */
  times?: number;
  /** Answer this status instead of handling (the request is not applied). */
  status?: number;
  /** With status: a Retry-After header value (seconds or HTTP date). */
  retryAfter?: string;
  /** With status: a raw body (e.g. an HTML page); default a JSON error body. */
  body?: string;
  /** With body: its content type; default text/html. */
  contentType?: string;
  /** Wait this long before handling normally. */
  delayMs?: number;
  /** Read the request, never answer (until close). */
  hang?: boolean;
  /** Handle normally, send headers and this many body bytes, then stall (until close). */
  stallAfterBytes?: number;
  /** upload: destroy the socket after this many request body bytes; other routes: after handling, having sent headers and this many response body bytes. */
  resetAfterBytes?: number;
  /** Apply the request, then destroy the socket without an answer. */
  loseResponse?: boolean;
  /** upload: store the body with one byte flipped, answer 200. */
  corruptUpload?: boolean;
  /** Answer 307 with this Location (request not applied). */
  redirect?: string;
  /** Handle normally, but answer 200 with this JSON. */
  replaceJson?: unknown;
}

const NUMBER_FIELDS = ['times', 'status', 'delayMs', 'stallAfterBytes', 'resetAfterBytes'] as const;
const STRING_FIELDS = ['retryAfter', 'body', 'contentType', 'redirect'] as const;
const BOOLEAN_FIELDS = ['hang', 'loseResponse', 'corruptUpload'] as const;

/** Checks a fault from JSON (the control route) or from code; throws a TypeError naming the bad field. */
export function validateFault(value: unknown): Fault {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError('a fault must be a JSON object');
  }
  const fault = value as Record<string, unknown>;
  if (!ROUTE_NAMES.includes(fault.route as RouteName)) {
    throw new TypeError(`fault.route must be one of ${ROUTE_NAMES.join(', ')}`);
  }
  for (const name of NUMBER_FIELDS) {
    const field = fault[name];
    if (field !== undefined && !(Number.isInteger(field) && (field as number) >= 0)) {
      throw new TypeError(`fault.${name} must be a non-negative integer`);
    }
  }
  for (const name of STRING_FIELDS) {
    if (fault[name] !== undefined && typeof fault[name] !== 'string')
      throw new TypeError(`fault.${name} must be a string`);
  }
  for (const name of BOOLEAN_FIELDS) {
    if (fault[name] !== undefined && typeof fault[name] !== 'boolean')
      throw new TypeError(`fault.${name} must be a boolean`);
  }
  if (fault.times === 0) throw new TypeError('fault.times must be at least 1');
  if (fault.status !== undefined && ((fault.status as number) < 100 || (fault.status as number) > 599)) {
    throw new TypeError('fault.status must be an HTTP status (100-599)');
  }
  return { ...fault } as unknown as Fault;
}

export class FaultInjector {
  private queue: { fault: Fault; remaining: number }[] = [];

  add(fault: Fault): void {
    const checked = validateFault(fault);
    this.queue.push({ fault: checked, remaining: checked.times ?? 1 });
  }

  clear(): void {
    this.queue = [];
  }

  /** The faults not yet used up, `times` being what is left of each. */
  pending(): Fault[] {
    return this.queue.map(({ fault, remaining }) => ({ ...fault, times: remaining }));
  }

  /** Uses up one application of the first queued fault for the route, if any. */
  take(route: RouteName): Fault | undefined {
    const index = this.queue.findIndex((entry) => entry.fault.route === route);
    if (index < 0) return undefined;
    const entry = this.queue[index]!;
    entry.remaining -= 1;
    if (entry.remaining === 0) this.queue.splice(index, 1);
    return entry.fault;
  }
}
