// Upload helpers for the file tests: lazily produced streamed bodies, raw-socket uploads, polling.
import { connect } from "node:net";
import { randomIp } from "./http.ts";

/**
 * A streamed request body of `size` bytes starting with `head`, produced lazily in 64 KiB chunks as the
 * connection takes them; `produced()` tells how much was ever generated.
 */
export function lazyBody(size: number, head: Buffer = Buffer.alloc(0)) {
  let produced = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (produced >= size) {
        c.close();
        return;
      }
      const n = Math.min(64 * 1024, size - produced);
      const chunk = Buffer.alloc(n, 0x61);
      if (produced < head.length) head.copy(chunk, 0, produced);
      produced += n;
      c.enqueue(chunk);
    },
  });
  return { stream, produced: () => produced };
}

export async function uploadStream(
  base: string,
  token: string,
  body: ReadableStream<Uint8Array>,
  contentType: string,
  name = "big.bin",
) {
  try {
    const r = await fetch(`${base}/v1/files/upload?name=${name}`, {
      method: "POST",
      body,
      duplex: "half",
      headers: { authorization: `Bearer ${token}`, "content-type": contentType, "x-forwarded-for": randomIp() },
    } as RequestInit);
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : undefined };
  } catch (err) {
    return { status: 0, body: undefined, err };
  }
}

/**
 * Streams `total` bytes (starting with `head`) as a chunked upload over a raw socket, writing only as fast as
 * the connection takes them; stops when a response arrives or the server hangs up. Answers the status and the
 * bytes of the body that could be written.
 */
export async function rawChunkedUpload(base: string, token: string, type: string, total: number, head: Buffer) {
  const sock = connect(Number(new URL(base).port), "127.0.0.1");
  let response = "";
  let ended = false;
  sock.on("data", (b) => {
    response += b.toString("latin1");
  });
  let reset = false;
  const finished = new Promise<void>((resolve) => {
    sock.on("close", () => resolve());
    sock.on("error", () => {
      reset = true;
      resolve();
    });
  });
  sock.write(
    `POST /v1/files/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Type: ${type}\r\nTransfer-Encoding: chunked\r\n\r\n`,
  );
  let written = 0;
  void finished.then(() => {
    ended = true;
  });
  while (written < total && !ended && !response) {
    const n = Math.min(64 * 1024, total - written);
    const data = Buffer.alloc(n, 0x61);
    if (written === 0) head.copy(data);
    const ok = sock.write(Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), data, Buffer.from("\r\n")]));
    written += n;
    if (!ok) await Promise.race([new Promise((r) => sock.once("drain", r)), finished]);
  }
  await finished;
  return { status: Number(response.split(" ")[1]), written, reset };
}

/** Sends raw request bytes and answers the status code of the response. */
export async function rawStatus(base: string, request: string): Promise<number> {
  const sock = connect(Number(new URL(base).port), "127.0.0.1");
  sock.write(request);
  const head = await new Promise<string>((resolve, reject) => {
    let got = "";
    sock.on("data", (b) => {
      got += b.toString("latin1");
      if (got.includes("\r\n")) resolve(got);
    });
    sock.on("error", reject);
  });
  sock.destroy();
  return Number(head.split(" ")[1]);
}
