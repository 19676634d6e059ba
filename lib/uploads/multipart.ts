import { Busboy, type BusboyFileStream } from "@fastify/busboy";
import { dropRestAfterAnswer } from "../http/body";
import { ApiError } from "../http/errors";
import { stripHiddenCharacters } from "../text";
import { type Reservation, UPLOAD_BODY_WAIT_MS, uploadBodyBudget } from "./body-budget";

/** How the one file part of a `multipart/form-data` body is read (`RouteIo.multipart`). */
export type MultipartSpec = {
  /** The name of the one file part; any other file part is refused. */
  fileField: string;
  /** The most bytes the file may hold; past it the answer is 413, and nothing more is kept. */
  maxFileBytes: number;
  /** The largest text field, in bytes. */
  maxFieldBytes?: number;
  /** How many text fields at most (their names are judged by the route's body schema). */
  maxFields?: number;
};

/** The file part as received, byte for byte: one buffer, no copies kept beside it. */
export type ReceivedFile = { name: string | null; bytes: Buffer };

export type MultipartForm = {
  fields: Record<string, string>;
  file: ReceivedFile | undefined;
  /** Gives the body's memory back to the process's budget (body-budget.ts): call once the file is stored. */
  release: () => void;
};

/** Room for the boundaries, part headers and text fields around the file. */
const FORM_OVERHEAD_BYTES = 64 * 1024;
/** How much of a refused body, in multiples of the limit, is still read and dropped while its answer goes out. */
const DRAIN_FACTOR = 2;

function badForm(detail: string, field = "body"): ApiError {
  return new ApiError("invalid_request", detail, { errors: [{ field, code: "invalid_request", detail }] });
}

function tooLarge(limit: number): ApiError {
  return new ApiError("payload_too_large", `Files are limited to ${limit} bytes (${limit / (1024 * 1024)} MiB).`);
}

/**
 * Reads a `multipart/form-data` body from its stream with busboy: text fields as strings, and
 * the one file part into a single buffer, sized from `Content-Length` when the client sent
 * one, so a 25 MiB file costs 25 MiB and not a list of chunks plus their concatenation. A file
 * over the limit is 413 as soon as it passes it; what follows is read and dropped while the
 * answer goes out (up to a bound: `dropRestAfterAnswer`), and nothing of it is kept.
 */
export async function readMultipartForm(req: Request, spec: MultipartSpec): Promise<MultipartForm> {
  const type = req.headers.get("content-type") ?? "";
  if (!/^multipart\/form-data\s*;/i.test(type.trim())) {
    throw badForm("The request body must be `multipart/form-data` with a `file` part (`Content-Type: multipart/form-data; boundary=…`).");
  }
  const maxFieldBytes = spec.maxFieldBytes ?? 1024;
  const maxFields = spec.maxFields ?? 8;
  const bodyLimit = spec.maxFileBytes + FORM_OVERHEAD_BYTES;
  const declared = req.headers.has("content-length") ? Number(req.headers.get("content-length")) : undefined;
  if (declared !== undefined && declared > bodyLimit) {
    dropRestAfterAnswer(req.body?.getReader(), bodyLimit * DRAIN_FACTOR);
    throw tooLarge(spec.maxFileBytes);
  }

  // Room in the process's memory for the body, before a byte of it is read.
  const room = await uploadBodyBudget().reserve(declared ?? bodyLimit, UPLOAD_BODY_WAIT_MS);
  if (!room) {
    dropRestAfterAnswer(req.body?.getReader(), bodyLimit * DRAIN_FACTOR);
    throw new ApiError("service_unavailable", "Too many large uploads are being received at once. Send the file again in a few seconds.");
  }
  try {
    const form = await readForm(req, spec, type, declared, bodyLimit, maxFieldBytes, maxFields, room);
    room.finished();
    return { ...form, release: room.release };
  } catch (err) {
    room.release();
    throw err;
  }
}

function tooSlow(): ApiError {
  return new ApiError(
    "service_unavailable",
    "The file arrived too slowly while other uploads waited for room, and was not kept. Send it again in a few seconds, or on a faster connection.",
  );
}

async function readForm(
  req: Request,
  spec: MultipartSpec,
  type: string,
  declared: number | undefined,
  bodyLimit: number,
  maxFieldBytes: number,
  maxFields: number,
  room: Reservation,
): Promise<Omit<MultipartForm, "release">> {
  let bb: ReturnType<typeof Busboy>;
  try {
    bb = Busboy({
      headers: { "content-type": type },
      limits: {
        fileSize: spec.maxFileBytes,
        // One more than taken, so a second file part is named in the refusal rather than dropped.
        files: 2,
        fields: maxFields,
        parts: maxFields + 2,
        fieldSize: maxFieldBytes,
        fieldNameSize: 100,
        headerPairs: 20,
      },
      // The file part is the file whether or not it names one (RFC 7578 §4.2: a filename is
      // optional; `curl -F 'file=<run.gpx'` sends none), so its bytes are kept as they came.
      isPartAFile: (name, _type, fileName) => fileName !== undefined || name === spec.fileField,
    });
  } catch (err) {
    throw badForm(`The multipart body cannot be read: ${(err as Error).message}.`);
  }

  const fields: Record<string, string> = {};
  let file: ReceivedFile | undefined;
  let refusal: ApiError | undefined;
  const refuse = (e: ApiError) => {
    refusal ??= e;
  };
  let fileDone: Promise<void> = Promise.resolve();

  bb.on("field", (name: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
    if (Object.hasOwn(fields, name)) return refuse(badForm(`The field \`${name}\` is sent more than once.`, name));
    if (valueTruncated) return refuse(badForm(`The field \`${name}\` is longer than ${maxFieldBytes} bytes.`, name));
    // Busboy decodes a field's bytes as UTF-8, each invalid sequence made U+FFFD: a name in
    // Latin-1 ("L\xF8p") or a binary external_id would be kept altered, where every JSON body
    // that is not UTF-8 is refused. U+FFFD is what broken text is made of, so it is refused too.
    if (value.includes("\uFFFD")) return refuse(badForm(`The field \`${name}\` is not valid UTF-8.`, name));
    fields[name] = value;
  });
  bb.on("file", (name: string | undefined, stream: BusboyFileStream, filename: string | undefined) => {
    if (name !== spec.fileField || file) {
      stream.resume();
      return refuse(
        name === undefined
          ? badForm(`A file part without a name: the file goes in the \`${spec.fileField}\` part.`)
          : file && name === spec.fileField
            ? badForm(`Send one \`${spec.fileField}\` part per upload.`, name)
            : badForm(`Unknown file part \`${name}\`: the file goes in the \`${spec.fileField}\` part.`, name),
      );
    }
    const received: ReceivedFile = { name: cleanFileName(filename), bytes: Buffer.alloc(0) };
    file = received;
    // Sized once from the declared body length (the file is at most that); grown by doubling otherwise.
    let buf = Buffer.allocUnsafe(Math.min(declared ?? 64 * 1024, spec.maxFileBytes));
    let size = 0;
    fileDone = new Promise<void>((resolve) => {
      stream.on("data", (chunk: Buffer) => {
        if (refusal?.code === "payload_too_large") return;
        if (size + chunk.byteLength > buf.byteLength) {
          const grown = Buffer.allocUnsafe(Math.min(spec.maxFileBytes, Math.max(buf.byteLength * 2, size + chunk.byteLength)));
          buf.copy(grown, 0, 0, size);
          buf = grown;
        }
        chunk.copy(buf, size);
        size += chunk.byteLength;
      });
      stream.on("limit", () => {
        refuse(tooLarge(spec.maxFileBytes));
        buf = Buffer.alloc(0);
      });
      stream.on("end", () => {
        received.bytes = refusal?.code === "payload_too_large" ? Buffer.alloc(0) : buf.subarray(0, size);
        resolve();
      });
      stream.on("error", () => resolve());
    });
  });
  bb.on("partsLimit", () => refuse(badForm("The body has more parts than an upload takes: one `file` and the documented fields.")));
  bb.on("filesLimit", () => refuse(badForm(`Send one \`${spec.fileField}\` part per upload.`, spec.fileField)));
  bb.on("fieldsLimit", () => refuse(badForm(`An upload takes at most ${maxFields} text fields.`)));

  const finished = new Promise<void>((resolve, reject) => {
    bb.on("finish", () => resolve());
    bb.on("error", (err: unknown) => reject(err instanceof Error ? err : new Error(String(err))));
  });
  // Busboy's own errors (a malformed body) are answered below; the promise must not be left unhandled meanwhile.
  finished.catch(() => {});

  let read = 0;
  if (req.body) {
    const reader = req.body.getReader();
    // Too slow while others wait (body-budget.ts): stop waiting for the body and answer, the rest
    // taken as every refusal's is (`dropRestAfterAnswer`), so the 503 reaches the client.
    const evicted = new Promise<"evicted">((resolve) => {
      if (room.evicted.aborted) resolve("evicted");
      else room.evicted.addEventListener("abort", () => resolve("evicted"), { once: true });
    });
    try {
      for (;;) {
        const reading = reader.read();
        // Left pending when evicted: whatever it ends with later is not anyone's concern.
        reading.catch(() => {});
        const next = await Promise.race([reading, evicted]);
        if (next === "evicted") {
          bb.destroy();
          dropRestAfterAnswer(reader, bodyLimit * DRAIN_FACTOR - read);
          throw tooSlow();
        }
        const { done, value } = next;
        if (done) break;
        read += value.byteLength;
        room.received(value.byteLength);
        if (read > bodyLimit) {
          refuse(tooLarge(spec.maxFileBytes));
          dropRestAfterAnswer(reader, bodyLimit * DRAIN_FACTOR - read);
          break;
        }
        if (refusal?.code === "payload_too_large") continue;
        if (!bb.write(value)) await new Promise<void>((r) => bb.once("drain", () => r()));
      }
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw badForm(`The request body could not be read to its end: ${(err as Error).message}.`);
    }
  }
  if (refusal?.code === "payload_too_large") {
    bb.destroy();
    throw refusal;
  }
  bb.end();
  try {
    await finished;
  } catch (err) {
    throw badForm(`The multipart body is malformed: ${(err as Error).message}.`);
  }
  await fileDone;
  if (refusal) throw refusal;
  return { fields, file };
}

/** The name as the client gave it, without a path, hidden characters or excess length; null when none is left. */
function cleanFileName(raw: string | undefined): string | null {
  if (!raw) return null;
  // Without its folders, and without the characters a name shown to people must not hold
  // (text.ts): a bidi override would make "ride<U+202E>tif.exe" read as "rideexe.fit".
  const name = Array.from(stripHiddenCharacters(raw.replace(/^.*[\\/]/, "")).trim()).slice(0, 255).join("");
  return name || null;
}
