# node-gyp build of the sd_notify Node-API addon (C only, no node-addon-api; build/Release/azc_notify.node) and of the
# azc-confine program that runs each mpd under Landlock (build/Release/azc-confine)
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
