import http from 'node:http';

/** Streams `chunk` `times` times with Transfer-Encoding: chunked (no content-length); resolves with the answer even if the server stops reading. */
export function chunkedCsvUpload(port: number, path: string, token: string, chunk: string, times: number): Promise<{ status: number; body: any; sent: number }> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let settled = false;
    const req = http.request(
      { host: '127.0.0.1', port, method: 'POST', path, agent: false, headers: { 'content-type': 'text/csv', authorization: `Bearer ${token}`, 'transfer-encoding': 'chunked' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          settled = true;
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null, sent });
          req.destroy();
        });
      },
    );
    req.on('error', (err) => {
      if (!settled) reject(err);
    });
    let count = 0;
    const pump = () => {
      while (count < times && !settled && !req.destroyed) {
        count += 1;
        sent += Buffer.byteLength(chunk);
        if (!req.write(chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!settled && !req.destroyed) req.end();
    };
    pump();
  });
}
