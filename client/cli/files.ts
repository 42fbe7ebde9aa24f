// Files: upload one (its id goes into `send --attach`), download one.
import { createWriteStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, extname } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { type Command, need } from "./context.ts";

/** The content type of a few common extensions; anything else is application/octet-stream (--type overrides). */
const TYPES: Record<string, string> = {
  ".txt": "text/plain",
  ".md": "text/markdown",
  ".csv": "text/csv",
  ".json": "application/json",
  ".pdf": "application/pdf",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".svg": "image/svg+xml",
  ".zip": "application/zip",
};

export const fileCommands: Record<string, Command> = {
  upload: {
    usage: "upload <path> [--name NAME] [--type CONTENT_TYPE]   prints the file id (send it with --attach)",
    flags: ["name", "type"],
    creates: true,
    async run(ctx) {
      const [path] = need(ctx, ["path"], "upload <path>");
      const bytes = await readFile(path!);
      const contentType = ctx.flags.type ?? TYPES[extname(path!).toLowerCase()] ?? "application/octet-stream";
      const f = await ctx.flock.upload(new Uint8Array(bytes), {
        name: ctx.flags.name ?? basename(path!),
        contentType,
        ...ctx.keyed,
      });
      ctx.print(
        f,
        () =>
          `uploaded ${f.id} (${f.name}, ${f.size} bytes, ${f.content_type})\nattach it: flockctl send <to> <body> --attach ${f.id}`,
      );
    },
  },
  download: {
    usage: "download <file_id> [--out PATH|-]             (default: the file's name in this folder)",
    flags: ["out"],
    async run(ctx) {
      const [id] = need(ctx, ["file_id"], "download <file_id>");
      const res = await ctx.flock.download(id!);
      const named = /filename\*=UTF-8''([^;]+)/i.exec(res.headers.get("content-disposition") ?? "");
      const out = ctx.flags.out ?? basename(named ? decodeURIComponent(named[1]!) : id!);
      if (!res.body) throw new Error("the download has no body");
      if (out === "-") {
        await pipeline(Readable.fromWeb(res.body as import("node:stream/web").ReadableStream), process.stdout);
        return;
      }
      await pipeline(
        Readable.fromWeb(res.body as import("node:stream/web").ReadableStream),
        createWriteStream(out, { flags: "wx" }),
      );
      ctx.print({ id, path: out }, () => `saved ${id} to ${out}`);
    },
  },
};
