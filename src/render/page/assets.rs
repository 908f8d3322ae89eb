//! The CSS and JavaScript inlined in every HTML page (no network at view time).

use super::region_class;
use crate::decode::Region;
use crate::render::grid::css_color;
use std::sync::OnceLock;

const CSS: &str = "\
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#fff}\
main{max-width:1280px;margin:0 auto;padding:0 20px 40px}\
nav.top{background:#1f2937;padding:8px 20px;display:flex;flex-wrap:wrap;align-items:center;gap:4px 18px}nav.top a{color:#e5e7eb;text-decoration:none}\
nav.top form{margin-left:auto}nav.top input{font:13px system-ui,sans-serif;padding:3px 8px;width:240px;border-radius:4px;border:1px solid #4b5563}\
#q{font:16px system-ui,sans-serif;padding:6px 10px;width:min(600px,100%)}#count{color:#555}ol#hits li{margin:2px 0}ol#hits .k{color:#777;font-size:12px}\
tr:target,section:target>h2{background:#fde68a}.tree .n a{color:inherit;text-decoration:none}.tree .n a:hover{text-decoration:underline}\
h1{margin:18px 0 6px}h2{border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:32px}h3{font-size:14px;margin:14px 0 6px}\
dl.facts{display:grid;grid-template-columns:max-content auto;gap:2px 16px}dl.facts dt{color:#555}dl.facts dd{margin:0;font-weight:600}\
ul.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:6px}ul.legend li{padding:2px 8px;border-radius:3px}\
nav.versions a,nav.versions b,nav.versions .gap{margin-right:8px}nav.versions .gap{color:#777}nav.versions .u{font-style:italic}\
figure{margin:16px 0}figcaption{font-weight:600;margin-bottom:6px}\
.fig{display:flex;flex-wrap:wrap;gap:20px;align-items:flex-start}\
table.grid{border-collapse:collapse;font:13px/1 ui-monospace,monospace}table.grid caption{text-align:left;color:#555;padding-bottom:4px}\
table.grid th{color:#777;font-weight:400;padding:3px 4px}table.grid td{padding:3px 4px;text-align:center;cursor:default;border:1px solid #fff}\
table.grid td.hi{outline:2px solid #d97706;outline-offset:-2px}table.grid td.cur{outline:2px solid #b91c1c;outline-offset:-2px}\
.tree{position:relative;font:12px/1.5 ui-monospace,monospace;overflow:auto;max-height:70vh;flex:1;min-width:360px}\
.tree .th{font:600 13px system-ui,sans-serif;margin-bottom:4px}.tree .n{white-space:pre}.tree .n.sel{background:#fde68a}.tree .p{color:#999}\
pre.src,pre.grammar{background:#f6f8fa;padding:10px;overflow:auto;font-size:12px;max-height:60vh}pre.grammar{border-left:3px solid #4e79a7}\
table.data{border-collapse:collapse;font-size:13px}table.data th,table.data td{border:1px solid #ddd;padding:3px 8px;text-align:left}\
dl.changes dt{font-weight:600}dl.changes ul{margin:2px 0 8px;font:12px/1.5 ui-monospace,monospace}.err{color:#b91c1c}";

/// Hovering a byte selects the deepest node covering it (`data-n`, computed by
/// kwire) and marks that node's bytes; hovering a node marks its bytes.
pub(crate) const SCRIPT: &str = "\
(()=>{let on=[];const mark=(e,c)=>{e.classList.add(c);on.push([e,c])};\
const show=(fig,n)=>{mark(n,'sel');const t=n.parentElement;\
if(n.offsetTop<t.scrollTop||n.offsetTop>t.scrollTop+t.clientHeight-20)t.scrollTop=n.offsetTop-t.clientHeight/2;\
if('d'in n.dataset)return;const o=+n.dataset.offset,l=+n.dataset.len;\
for(const c of fig.querySelectorAll('td[data-offset]')){const x=+c.dataset.offset;if(x>=o&&x<o+l)mark(c,'hi')}};\
document.addEventListener('mouseover',ev=>{const t=ev.target.closest('[data-offset]');\
for(const[e,c]of on)e.classList.remove(c);on=[];if(!t)return;const fig=t.closest('figure');\
if(t.tagName==='TD'){const n=document.getElementById(fig.id+'n'+t.dataset.n);if(n)show(fig,n);mark(t,'cur')}else show(fig,t)})})();";

/// The search page: filters the JSON index inlined in the page (`[text,
/// kind, link]`) by every word typed, shortest names first, as one types and
/// from `?q=` (the search box of every page's bar submits there).
pub(crate) const SEARCH_SCRIPT: &str = "\
(()=>{const idx=JSON.parse(document.getElementById('search-index').textContent),q=document.getElementById('q'),\
hits=document.getElementById('hits'),count=document.getElementById('count'),MAX=200;\
const run=()=>{const words=q.value.toLowerCase().split(/\\s+/).filter(Boolean);hits.replaceChildren();count.textContent='';if(!words.length)return;\
const found=idx.filter(([t])=>{const l=t.toLowerCase();return words.every(w=>l.includes(w))}).sort((a,b)=>a[0].length-b[0].length);\
for(const[t,k,h]of found.slice(0,MAX)){const li=document.createElement('li'),a=document.createElement('a'),s=document.createElement('span');\
a.href=h;a.textContent=t;s.className='k';s.textContent=k;li.append(a,' ',s);hits.append(li)}\
count.textContent=found.length+(found.length===1?' match':' matches')+(found.length>MAX?', the first '+MAX+' shown':'')};\
q.value=new URLSearchParams(location.search).get('q')||'';q.addEventListener('input',run);run()})();";

/// The stylesheet with the region colours of the terminal grid.
pub fn style() -> &'static str {
    static STYLE: OnceLock<String> = OnceLock::new();
    STYLE.get_or_init(|| {
        let mut s = String::from(CSS);
        for r in Region::ALL {
            s.push_str(&format!(
                ".{}{{background:{}}}",
                region_class(r),
                css_color(r)
            ));
        }
        s
    })
}
