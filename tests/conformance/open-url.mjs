#!/usr/bin/env node
// A stand-in browser for the conformance scenarios, whose authorization servers approve at
// once: GET the authorization URL and follow the redirects (to our loopback callback).
const response = await fetch(process.argv.at(-1), { redirect: 'follow' });
await response.arrayBuffer();
process.exit(response.ok ? 0 : 1);
