import type { CallOptions, Metadata, ServiceError } from "@grpc/grpc-js";
import type { TsProtoServiceDefinition } from "nice-grpc";

/**
 * The part of a ts-proto message type the transports use: `fromPartial` builds a fresh message
 * with every absent scalar at its proto3 default ("" / 0 / false / []) and unknown fields left out
 * — what a decode of the encoded value would give (docs/design/services.md#in-process-transport).
 */
export interface MessageType<T> {
  fromPartial(object: T): T;
}

/** One unary method of a ts-proto generic service definition (`outputServices=generic-definitions`). */
export interface MethodDefinition<Req, Res> {
  /** Method name as in the .proto file, e.g. `CastVote`. */
  readonly name: string;
  readonly requestType: MessageType<Req>;
  readonly responseType: MessageType<Res>;
  readonly requestStream: false;
  readonly responseStream: false;
  /**
   * Method options from the .proto; `idempotencyLevel` decides retries (client.ts isRetriable,
   * docs/design/services.md#retries-declared-in-the-proto). Custom options (the caller policy) come
   * encoded in `_unknownFields`: read from the generated CALLER_POLICY instead.
   */
  readonly options?: { readonly idempotencyLevel?: string; readonly _unknownFields?: unknown };
}

/**
 * A ts-proto generic service definition, e.g. `forum.ForumServiceDefinition`: the full service
 * name and its methods keyed like the generated gRPC client's (`castVote`, …).
 */
export interface ServiceDefinitionLike {
  /** e.g. `aps.forum.v1.ForumService` */
  readonly fullName: string;
  // `any`: each method has its own message types (RequestOf/ResponseOf recover them).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
  readonly methods: { readonly [method: string]: MethodDefinition<any, any> };
}

/** A ts-proto generic service definition as both the transports and nice-grpc's `Client` read it. */
export type ServiceDefinition = ServiceDefinitionLike & TsProtoServiceDefinition;

/** Request type of a method definition (what its `fromPartial` returns). */
export type RequestOf<M extends MethodDefinition<unknown, unknown>> = ReturnType<M["requestType"]["fromPartial"]>;
/** Response type of a method definition (what its `fromPartial` returns). */
export type ResponseOf<M extends MethodDefinition<unknown, unknown>> = ReturnType<M["responseType"]["fromPartial"]>;

/** Callback of a unary call: an error (gRPC status, APS code in metadata) or the response. */
export type UnaryCallback<Res> = (err: ServiceError | null, res: Res) => void;

/**
 * A unary method in the callback style of a generated grpc-js client:
 * `(request, metadata, { deadline }, callback)`. Both transports provide it.
 */
export type UnaryMethod<Req, Res> = (
  req: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  cb: UnaryCallback<Res>,
) => unknown;

/**
 * The unary methods of service `D`, keyed like the generated client (`castVote`, …): what a typed
 * client calls. A generated grpc-js client (`new forum.ForumServiceClient(addr, …)`) is one; the
 * in-process endpoint of the all-in-one (`LocalEndpoint.methods`) is the other.
 */
export type Channel<D extends ServiceDefinitionLike> = {
  readonly [K in keyof D["methods"]]: UnaryMethod<RequestOf<D["methods"][K]>, ResponseOf<D["methods"][K]>>;
};
