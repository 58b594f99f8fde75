# node-gyp build of the sd_notify Node-API addon (C only, no node-addon-api; build/Release/azc_notify.node), of the
# azc-confine program that runs each mpd and receiver under Landlock (build/Release/azc-confine), and of azc-bind.so,
# preloaded into each receiver to keep its TCP listening sockets to the daemon's address (build/Release/azc-bind.so)
{
  "targets": [
    {
      "target_name": "azc_notify",
      "sources": ["notify.c"],
      "defines": ["NAPI_VERSION=8"],
      "cflags": ["-std=c11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"],
      "conditions": [
        ["OS!='linux'", { "defines": ["AZC_NOTIFY_UNSUPPORTED=1"] }]
      ]
    },
    {
      "target_name": "azc-bind",
      "type": "loadable_module",
      "product_prefix": "",
      "product_extension": "so",
      "sources": ["bind.c"],
      "cflags": ["-std=c11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"],
      "libraries": ["-ldl"],
      "conditions": [
        ["OS!='linux'", { "type": "none", "sources": [] }]
      ]
    },
    {
      "target_name": "azc-confine",
      "type": "executable",
      "sources": ["confine.c"],
      "cflags": ["-std=c11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"],
      "conditions": [
        ["OS!='linux'", { "type": "none", "sources": [] }]
      ]
    }
  ]
}
