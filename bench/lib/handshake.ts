import type http from "node:http";

/** Answers a subscription handshake (a GET with `hub.challenge`) as a receiver must; false for any other request. */
export function answerHandshake(req: http.IncomingMessage, res: http.ServerResponse): boolean {
  if (req.method !== "GET") return false;
  const challenge = new URL(req.url ?? "/", "http://receiver").searchParams.get("hub.challenge");
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ "hub.challenge": challenge }));
  return true;
}
