import { randomUUID } from "node:crypto";
import type { Socket } from "node:net";
import { HTTP_STATUS, type ErrorCode } from "@aps/platform";

/**
 * Answers requests that node's HTTP parser refuses before express sees them (the server's
 * `clientError` event) with the same RFC 9457 problem document as every other error, instead of
 * node's bare status line: a request head over `maxHeaderSize` → 431 `headers_too_large`
 * (RFC 6585 §5); any other malformed request → 400 `invalid_request`. Resets and timeouts just
 * close the socket. The connection is always closed afterwards (the parser state is lost).
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === "ECONNRESET" || err.code === "ERR_HTTP_REQUEST_TIMEOUT" || !socket.writable) {
    socket.destroy();
    return;
  }
  const code: ErrorCode = err.code === "HPE_HEADER_OVERFLOW" ? "headers_too_large" : "invalid_request";
  const status = HTTP_STATUS[code];
  const requestId = randomUUID();
  const body = JSON.stringify({
    type: `/docs/errors.md#${code}`,
    title: code === "headers_too_large" ? "Request header fields too large" : "Invalid request",
    status,
    detail:
      code === "headers_too_large"
        ? "the request line and headers are over 16 KiB"
        : "the request is not valid HTTP/1.1",
    code,
    requestId,
  });
  const reason = code === "headers_too_large" ? "Request Header Fields Too Large" : "Bad Request";
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n` +
      "Content-Type: application/problem+json; charset=utf-8\r\n" +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      "Cache-Control: no-store\r\n" +
      `X-Request-Id: ${requestId}\r\n` +
      "Connection: close\r\n\r\n" +
      body,
  );
}
