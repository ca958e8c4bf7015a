// The HTML report's stylesheet: one light, print-friendly page; verdict colours match the charts.
export const HTML_CSS = `
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#0f172a;background:#f8fafc}
main{max-width:1180px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:0 0 6px}h3{font-size:14px;margin:16px 0 4px;color:#334155}
header,section{background:#fff;border:1px solid #e2e8f0;border-radius:8px;padding:16px 20px;margin:0 0 16px}
.sub,.muted{color:#64748b}.small{font-size:12px}
.badge{display:inline-block;padding:2px 10px;border-radius:999px;font-weight:600;color:#fff;margin-right:8px}
.v-pass{background:#16a34a}.v-warn{background:#d97706}.v-fail{background:#dc2626}.v-inconclusive{background:#64748b}
.t-pass{color:#15803d}.t-warn{color:#b45309}.t-fail{color:#b91c1c;font-weight:600}.t-inconclusive{color:#475569}
.better{color:#15803d}.worse{color:#b91c1c}
code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;background:#f1f5f9;border-radius:4px}
code{padding:1px 4px}pre{padding:8px 10px;white-space:pre-wrap;word-break:break-all;margin:6px 0}
table{border-collapse:collapse;width:100%;font-size:13px;margin:6px 0}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #e2e8f0;vertical-align:top}
th{color:#475569;font-weight:600;background:#f8fafc}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(340px,1fr));gap:8px 24px}
.grid3{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:8px 16px}
.chart{min-width:0;overflow:hidden}
.key{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12px;color:#475569;margin:2px 0 8px}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;vertical-align:-1px}
.tol{display:inline-block;width:14px;border-top:2px dashed #dc2626;margin-right:4px;vertical-align:3px}
nav a{margin-right:12px}
.uplot .u-title{font-size:13px}
.u-legend{font-size:12px}
@media print{body{background:#fff}header,section{border:0;padding:0}}
`;
