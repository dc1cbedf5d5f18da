extension WebTemplates {
    static let consoleApps = #"""
    {{<console_layout}}{{$main}}
    {{#content}}
    <h1>{{t.apps}}</h1>
    {{^editable}}<p class="notice">{{t.managed_by_file}}</p>{{/editable}}
    {{#catalogue}}
    <section id="catalogue" aria-labelledby="h-catalogue">
    <h2 id="h-catalogue">{{t.catalogue}}</h2>
    <table><caption>{{t.publications}}</caption>
    <thead><tr><th scope="col">{{t.id}}</th><th scope="col">{{t.publication}} / {{t.edition}}</th><th scope="col">{{t.created_on}}</th></tr></thead><tbody>
    {{#publications}}
    <tr><td>{{id}}</td><td>{{#editable}}<form class="inline" method="post" action="/admin/catalogue"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="action" value="rename_publication"><input type="hidden" name="id" value="{{id}}"><input name="name" value="{{name}}" required aria-label="{{t.publication}} {{id}}: {{t.name}}"> <button type="submit">{{t.rename}}</button></form>{{/editable}}{{^editable}}<strong>{{name}}</strong>{{/editable}}</td><td></td></tr>
    {{#editions}}<tr><td>{{id}}</td><td>↳ {{#editable}}<form class="inline" method="post" action="/admin/catalogue"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="action" value="rename_edition"><input type="hidden" name="id" value="{{id}}"><input name="name" value="{{name}}" required aria-label="{{t.edition}} {{id}}: {{t.name}}"> <button type="submit">{{t.rename}}</button></form>{{/editable}}{{^editable}}{{name}}{{/editable}}</td><td>{{createdOn}}</td></tr>{{/editions}}
    {{/publications}}
    </tbody></table>
    {{#editable}}
    <form method="post" action="/admin/catalogue" aria-labelledby="h-add-publication">
    <h3 id="h-add-publication">{{t.add_publication}}</h3>
    <input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="action" value="add_publication">
    <label for="pub-id">{{t.id}}</label> <input id="pub-id" name="id" type="number" min="1" required>
    <label for="pub-name">{{t.name}}</label> <input id="pub-name" name="name" required>
    <button type="submit">{{t.add}}</button>
    </form>
    <form method="post" action="/admin/catalogue" aria-labelledby="h-add-edition">
    <h3 id="h-add-edition">{{t.add_edition}}</h3>
    <input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="action" value="add_edition">
    <label for="ed-publication">{{t.publication}}</label>
    <select id="ed-publication" name="publication">{{#publications}}<option value="{{id}}">{{name}}</option>{{/publications}}</select>
    <label for="ed-id">{{t.id}}</label> <input id="ed-id" name="id" type="number" min="1" required>
    <label for="ed-name">{{t.name}}</label> <input id="ed-name" name="name" required>
    <label for="ed-created">{{t.created_on}}</label> <input id="ed-created" name="created_on" type="date" value="{{today}}" required>
    <button type="submit">{{t.add}}</button>
    </form>
    <form method="post" action="/admin/catalogue" aria-labelledby="h-add-app">
    <h3 id="h-add-app">{{t.add_app}}</h3>
    <input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="action" value="add_app">
    <label for="app-key">{{t.app_key}}</label> <input id="app-key" name="key" required>
    <label for="app-name">{{t.name}}</label> <input id="app-name" name="name" required>
    <button type="submit">{{t.add}}</button>
    </form>
    <p>{{t.no_removal}}</p>
    {{/editable}}
    </section>
    {{/catalogue}}
    {{#apps}}
    <section id="app-{{key}}" aria-labelledby="h-{{key}}">
    <h2 id="h-{{key}}">{{name}} <code>{{key}}</code></h2>
    <form method="post" action="/admin/apps/{{key}}">
    <input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="action" value="quota">
    <label for="quota-{{key}}">{{t.demo_quota}}</label>
    <input id="quota-{{key}}" name="demo_quota" type="number" min="0" value="{{demoQuota}}"{{^editable}} disabled{{/editable}}>
    {{#editable}}<button type="submit">{{t.save}}</button>{{/editable}}
    </form>
    <h3>{{t.lines}}</h3>
    <table><thead><tr><th scope="col">{{t.order}}</th><th scope="col">{{t.edition}}</th><th scope="col">{{t.access}}</th><th scope="col"></th></tr></thead><tbody>
    {{#lines}}<tr><td>{{order}}</td><td>{{name}}</td><td>{{#free}}{{t.free}}{{/free}}{{^free}}{{t.subscribers}}{{/free}}</td><td>
    {{#editable}}
    <form class="inline" method="post" action="/admin/apps/{{key}}"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="edition" value="{{edition}}"><button name="action" value="up" aria-label="{{t.up}}: {{name}}">↑</button><button name="action" value="down" aria-label="{{t.down}}: {{name}}">↓</button><input type="hidden" name="access" value="{{#free}}subscribers{{/free}}{{^free}}free{{/free}}"><button name="action" value="access">{{#free}}{{t.subscribers}}{{/free}}{{^free}}{{t.free}}{{/free}}</button><button name="action" value="remove">{{t.remove}}</button></form>
    {{/editable}}
    </td></tr>{{/lines}}
    </tbody></table>
    {{#editable}}
    <form method="post" action="/admin/apps/{{key}}">
    <input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="action" value="add">
    <label for="add-{{key}}">{{t.add_line}}</label>
    <select id="add-{{key}}" name="edition">{{#otherEditions}}<option value="{{id}}">{{name}}</option>{{/otherEditions}}</select>
    <label for="access-{{key}}">{{t.access}}</label>
    <select id="access-{{key}}" name="access"><option value="subscribers">{{t.subscribers}}</option><option value="free">{{t.free}}</option></select>
    <button type="submit">{{t.add}}</button>
    </form>
    {{/editable}}
    {{#webKiosk}}
    <h3 id="wk-{{key}}">{{t.web_kiosk}}</h3>
    <form method="post" action="/admin/apps/{{key}}" aria-labelledby="wk-{{key}}">
    <input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="action" value="web_kiosk">
    <p><label for="wk-base-{{key}}">{{t.base_url}}</label>
    <input id="wk-base-{{key}}" name="base_url" type="url" size="40" value="{{baseURL}}" placeholder="{{ownURL}}" aria-describedby="wk-base-hint-{{key}}"{{^editable}} disabled{{/editable}}>
    <span id="wk-base-hint-{{key}}">{{t.base_url_hint}} <code>{{ownURL}}</code></span></p>
    <table><caption>{{t.web_sections}}</caption>
    <thead><tr><th scope="col">{{t.section_name}}</th><th scope="col">{{t.section_path}}</th><th scope="col">{{t.aliases}}</th><th scope="col">{{t.default_section}}</th><th scope="col">{{t.remove}}</th></tr></thead><tbody>
    {{#sections}}<tr>
    <td><input name="section_name_{{index}}" value="{{name}}" aria-label="{{#isNew}}{{t.new_section}}: {{t.section_name}}{{/isNew}}{{^isNew}}{{t.section_name}}: {{name}}{{/isNew}}"{{^editable}} disabled{{/editable}}></td>
    <td><input name="section_path_{{index}}" value="{{path}}" aria-label="{{#isNew}}{{t.new_section}}: {{t.section_path}}{{/isNew}}{{^isNew}}{{t.section_path}}: {{name}}{{/isNew}}"{{^editable}} disabled{{/editable}}></td>
    <td><input name="section_aliases_{{index}}" value="{{aliases}}" aria-label="{{#isNew}}{{t.new_section}}: {{t.aliases}}{{/isNew}}{{^isNew}}{{t.aliases}}: {{name}}{{/isNew}}" aria-describedby="wk-aliases-hint-{{key}}"{{^editable}} disabled{{/editable}}></td>
    <td><input type="radio" name="default_section" value="{{index}}"{{#isDefault}} checked{{/isDefault}} aria-label="{{#isNew}}{{t.new_section}}: {{t.default_section}}{{/isNew}}{{^isNew}}{{t.default_section}}: {{name}}{{/isNew}}"{{^editable}} disabled{{/editable}}></td>
    <td>{{^isNew}}<input type="checkbox" name="section_remove_{{index}}" value="1" aria-label="{{t.remove}}: {{name}}"{{^editable}} disabled{{/editable}}>{{/isNew}}</td>
    </tr>{{/sections}}
    </tbody></table>
    <p id="wk-aliases-hint-{{key}}">{{t.aliases_hint}}</p>
    <p><input type="radio" id="wk-first-{{key}}" name="default_section" value=""{{#noDefault}} checked{{/noDefault}}{{^editable}} disabled{{/editable}}>
    <label for="wk-first-{{key}}">{{t.default_first}}</label></p>
    {{#editable}}<button type="submit">{{t.save}}</button>{{/editable}}
    </form>
    {{/webKiosk}}
    {{#products}}
    <h3 id="products-{{key}}">{{t.store_products}}</h3>
    <form method="post" action="/admin/apps/{{key}}" aria-labelledby="products-{{key}}">
    <input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="action" value="products">
    {{^hasProducts}}<p>{{t.no_products}}</p>{{/hasProducts}}
    <table><caption>{{t.store_products}}</caption>
    <thead><tr><th scope="col">{{t.product_id}}</th><th scope="col">{{t.apple_id}}</th><th scope="col">{{t.google_id}}</th><th scope="col">{{t.kind}}</th><th scope="col">{{t.product_editions}}</th><th scope="col">{{t.credits}}</th><th scope="col">{{t.scope}}</th><th scope="col">{{t.remove}}</th></tr></thead><tbody>
    {{#rows}}<tr class="product"{{^isNew}} data-summary="{{summary}}"{{/isNew}}>
    <td><input name="product_id_{{index}}" value="{{id}}" size="22" aria-label="{{#isNew}}{{t.new_product}}: {{t.product_id}}{{/isNew}}{{^isNew}}{{t.product_id}}: {{id}}{{/isNew}}"{{^editable}} disabled{{/editable}}></td>
    <td><input name="product_apple_id_{{index}}" value="{{appleID}}" size="14" aria-label="{{#isNew}}{{t.new_product}}{{/isNew}}{{^isNew}}{{id}}{{/isNew}}: {{t.apple_id}}"{{^editable}} disabled{{/editable}}></td>
    <td><input name="product_google_id_{{index}}" value="{{googleID}}" size="14" aria-label="{{#isNew}}{{t.new_product}}{{/isNew}}{{^isNew}}{{id}}{{/isNew}}: {{t.google_id}}"{{^editable}} disabled{{/editable}}></td>
    <td><select name="product_kind_{{index}}" aria-label="{{#isNew}}{{t.new_product}}{{/isNew}}{{^isNew}}{{id}}{{/isNew}}: {{t.kind}}"{{^editable}} disabled{{/editable}}>{{#kinds}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/kinds}}</select></td>
    <td><input name="product_editions_{{index}}" value="{{editions}}" size="8" aria-label="{{#isNew}}{{t.new_product}}{{/isNew}}{{^isNew}}{{id}}{{/isNew}}: {{t.product_editions}}" aria-describedby="products-hint-{{key}}"{{^editable}} disabled{{/editable}}></td>
    <td><input name="product_credits_{{index}}" value="{{credits}}" type="number" min="1" max="1000" style="width:5rem" aria-label="{{#isNew}}{{t.new_product}}{{/isNew}}{{^isNew}}{{id}}{{/isNew}}: {{t.credits}}"{{^editable}} disabled{{/editable}}></td>
    <td><select name="product_scope_{{index}}" aria-label="{{#isNew}}{{t.new_product}}{{/isNew}}{{^isNew}}{{id}}{{/isNew}}: {{t.scope}}"{{^editable}} disabled{{/editable}}>{{#scopes}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/scopes}}</select></td>
    <td>{{^isNew}}<input type="checkbox" name="product_remove_{{index}}" value="1" aria-label="{{t.remove}}: {{id}}"{{^editable}} disabled{{/editable}}>{{/isNew}}</td>
    </tr>{{/rows}}
    </tbody></table>
    <p id="products-hint-{{key}}">{{t.products_hint}}</p>
    {{#editable}}<button type="submit">{{t.save}}</button>{{/editable}}
    </form>
    {{/products}}
    </section>
    {{/apps}}
    {{/content}}
    {{/main}}{{/console_layout}}
    """#
}
