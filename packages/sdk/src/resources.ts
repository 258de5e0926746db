import { VoxkeyError } from './errors.js';
import type { AcceptedRequest, RequestOptions } from './request.js';
import { pageFrom, paginate, toQuery, type ListParams, type Page } from './pagination.js';
import { anySignal, sleep } from './transport.js';
import type { Accepted, RequestRecord } from './types.js';
import { newRequestUuid, voiceDataOf, type VoiceInput } from './voice.js';

/** What an openapi-fetch call resolves to. */
export type RawResult<T> = { data?: T; error?: unknown; response: Response };
type Unwrap = <T>(result: RawResult<T>) => T;
type ListQuery = ReturnType<typeof toQuery>;

export interface ListResource<T> {
  list(params?: ListParams, options?: RequestOptions): Promise<Page<T>>;
  iterate(params?: ListParams, options?: RequestOptions): AsyncGenerator<T, void, undefined>;
}

/** `list` (one page with the pagination headers) and `iterate` (every item, pages fetched lazily) over one list route. */
export function listResource<T>(
  fetchPage: (
    query: ListQuery,
    options: RequestOptions | undefined,
  ) => Promise<RawResult<{ results: T[] }>>,
  unwrap: Unwrap,
): ListResource<T> {
  const list = async (params?: ListParams, options?: RequestOptions): Promise<Page<T>> => {
    const result = await fetchPage(toQuery(params), options);
    return pageFrom(unwrap(result), result.response, params?.page ?? 1);
  };
  return { list, iterate: (params, options) => paginate((page) => list(page, options), params) };
}

export interface WaitForResultOptions {
  /** Gives up after this many ms with a VoxkeyError of kind 'timeout'. Default 60000. */
  timeoutMs?: number;
  /** Pause between two reads of the record in ms. Default 1000. */
  intervalMs?: number;
  /** Stops waiting; the signal's reason is thrown. */
  signal?: AbortSignal;
}

export const DEFAULT_WAIT_TIMEOUT_MS = 60_000;
export const DEFAULT_WAIT_INTERVAL_MS = 1000;

export interface VoiceRequestResource<Input> {
  create(input: Input, options?: RequestOptions): Promise<AcceptedRequest>;
  get(requestUuid: string, options?: RequestOptions): Promise<RequestRecord>;
  waitForResult(requestUuid: string, options?: WaitForResultOptions): Promise<RequestRecord>;
}

/**
 * An asynchronous voice request (enrolment or verification): `create` sends it with a
 * `request_uuid` (generated when omitted; the server de-duplicates by it, so retries are safe),
 * `get` reads its record, `waitForResult` polls the record until it is completed or failed.
 */
export function voiceRequestResource<
  Input extends { voice_data: VoiceInput; request_uuid?: string },
  Body,
>(operations: {
  kind: 'enrolment' | 'verification';
  create: (body: Body, options: RequestOptions | undefined) => Promise<RawResult<Accepted>>;
  get: (
    requestUuid: string,
    options: RequestOptions | undefined,
  ) => Promise<RawResult<RequestRecord>>;
  unwrap: Unwrap;
}): VoiceRequestResource<Input> {
  const { kind, unwrap } = operations;
  const get = async (requestUuid: string, options?: RequestOptions) =>
    unwrap(await operations.get(requestUuid, options));
  return {
    async create(input, options) {
      const request_uuid = input.request_uuid ?? newRequestUuid();
      const body = { ...input, voice_data: voiceDataOf(input.voice_data), request_uuid } as Body;
      const accepted = unwrap(await operations.create(body, options));
      return { ...accepted, request_uuid };
    },
    get,
    async waitForResult(requestUuid, options = {}) {
      const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
      const intervalMs = options.intervalMs ?? DEFAULT_WAIT_INTERVAL_MS;
      const deadline = new AbortController();
      const timer = setTimeout(
        () => deadline.abort(new DOMException(`Waited ${timeoutMs} ms`, 'TimeoutError')),
        timeoutMs,
      );
      const signal = options.signal
        ? anySignal([options.signal, deadline.signal])
        : deadline.signal;
      let last: RequestRecord | undefined;
      try {
        for (;;) {
          last = await get(requestUuid, { signal });
          if (last.status === 'completed' || last.status === 'failed') return last;
          await sleep(intervalMs, signal);
        }
      } catch (error) {
        if (!deadline.signal.aborted || options.signal?.aborted) throw error;
        throw new VoxkeyError({
          kind: 'timeout',
          status: 0,
          code: 0,
          message: `The ${kind} ${requestUuid} did not complete within ${timeoutMs} ms${last ? ` (last status: ${last.status})` : ''}`,
          cause: error,
        });
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
