// The key form served (with status 401) in place of / and /dashboard when the server needs a key.
'use strict';
document.getElementById('login').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const k = document.getElementById('key').value.trim();
  if (!k) return;
  localStorage.setItem('kvscope_key', k);
  // The cookie holds the key as hex of its UTF-8 bytes (as common.js writes it).
  const hex = Array.from(new TextEncoder().encode(k), (b) => b.toString(16).padStart(2, '0')).join('');
  document.cookie = 'kvscope_key=' + hex + '; path=/; SameSite=Strict';
  location.reload();
});
