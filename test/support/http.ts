// HTTP below fetch: a request sent byte for byte over a socket of its own (rawRequest), and a plain
// HTTP/1.1 request whose connection handling the test chooses (request: a keep-alive agent, or a
// connection of its own).
import { type Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  /** header names in lower case; a repeated header's values joined with ", " */
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends `bytes` exactly as given (request line, headers, body) to a listening server over one TCP
 * connection and parses the one response. For replaying, byte for byte, what a client library
 * puts on the wire, including shapes that `inject` or `fetch` would normalise (an empty body with a
 * content type, headers in the library's order and case). The connection stays open for writing
 * until the response is complete (by Content-Length, chunked encoding, or the server closing), as
 * a client's does: a client that half-closed at once would have Node abort a request still in
 * progress.
 */
export function rawRequest(port: number, bytes: string | Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let buffered = Buffer.alloc(0);
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      const split = buffered.indexOf('\r\n\r\n');
      if (split < 0) {
        if (closed) reject(new Error(`no complete response: ${JSON.stringify(buffered.toString('utf8'))}`));
        return;
      }
      const [statusLine = '', ...lines] = buffered.subarray(0, split).toString('utf8').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
      }
      const rest = buffered.subarray(split + 4);
      let body: Buffer | undefined;
      if (headers['transfer-encoding']?.toLowerCase() === 'chunked') body = dechunk(rest);
      else if (headers['content-length'] !== undefined) {
        const n = Number(headers['content-length']);
        if (rest.length >= n) body = rest.subarray(0, n);
      } else if (closed) body = rest;
      if (body === undefined) {
        if (closed) reject(new Error(`incomplete response body: ${JSON.stringify(rest.toString('utf8'))}`));
        return;
      }
      done = true;
      socket.destroy();
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: body.toString('utf8') });
    };
    socket.on('data', (c) => {
      buffered = Buffer.concat([buffered, c]);
      finish(false);
    });
    socket.on('error', (err) => {
      if (!done) reject(err);
    });
    socket.on('end', () => finish(true));
    socket.write(bytes);
  });
}

/** The body of a chunked message, or undefined while its last chunk has not arrived. */
function dechunk(data: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf('\r\n', at);
    if (eol < 0) return undefined;
    const size = Number.parseInt(data.subarray(at, eol).toString('latin1'), 16);
    if (Number.isNaN(size)) throw new Error('malformed chunked body');
    if (size === 0) return Buffer.concat(parts);
    if (data.length < eol + 2 + size + 2) return undefined;
    parts.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One request to 127.0.0.1:`port`. `agent`: false (the default) opens a connection of its own,
 * closed after the answer; a keep-alive agent reuses its connections. Rejects with the socket
 * error (its `code`, and `reusedSocket`: whether the request went on a connection that had
 * already carried one) when no answer came.
 */
export function request(
  port: number,
  path: string,
  o: { method?: string; headers?: Record<string, string>; agent?: Agent | false; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: o.method ?? 'GET',
        headers: o.headers,
        agent: o.agent ?? false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', (err) => reject(Object.assign(err, { reusedSocket: req.reusedSocket })));
    req.end(o.body);
  });
}
